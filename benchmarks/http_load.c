/* A closed-loop HTTP/1.1 load generator for cuvil-serve, in C so that the
 * client adds microseconds, not the Python interpreter's tens of them.
 * Built and run by benchmarks/bench.py.
 *
 *   http_load PORT PATH BODY_FILE CONCURRENCY SECONDS
 *     -> {"requests": n, "errors": n, "seconds": s, "throughput": req/s,
 *         "p50": ms, "p99": ms, "min": ms}
 *
 * Each of CONCURRENCY threads keeps one keep-alive connection to
 * 127.0.0.1:PORT and POSTs BODY_FILE to PATH in a loop, timing each request
 * to the end of its response. A non-200 answer counts as an error.
 */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int port;
static char request[1 << 20];
static size_t request_size;
static double stop_at;

typedef struct {
  double *latencies;
  size_t count, capacity;
  long errors;
} worker;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int connect_server(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in address;
  memset(&address, 0, sizeof(address));
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Reads one response; returns its status code, or -1 if the connection
 * broke. */
static int read_response(int fd, char *buffer, size_t size) {
  size_t have = 0;
  char *end = NULL;
  long length = 0;
  int status;
  while (!end) {
    ssize_t got = read(fd, buffer + have, size - have - 1);
    if (got <= 0)
      return -1;
    have += (size_t)got;
    buffer[have] = 0;
    end = strstr(buffer, "\r\n\r\n");
  }
  status = atoi(buffer + 9);
  {
    char *field = strcasestr(buffer, "\r\ncontent-length:");
    if (field)
      length = atol(field + 17);
  }
  {
    size_t body = have - (size_t)(end + 4 - buffer);
    while ((long)body < length) {
      ssize_t got = read(fd, buffer, size);
      if (got <= 0)
        return -1;
      body += (size_t)got;
    }
  }
  return status;
}

static void *run(void *arg) {
  worker *self = arg;
  static __thread char buffer[1 << 20];
  int fd = connect_server();
  while (fd >= 0 && now_ms() < stop_at) {
    double start = now_ms();
    size_t sent = 0;
    int status;
    while (sent < request_size) {
      ssize_t put = write(fd, request + sent, request_size - sent);
      if (put <= 0)
        break;
      sent += (size_t)put;
    }
    status = read_response(fd, buffer, sizeof(buffer));
    if (status != 200) {
      self->errors++;
      if (status < 0) {
        close(fd);
        fd = connect_server();
      }
      continue;
    }
    if (self->count == self->capacity) {
      self->capacity = self->capacity ? 2 * self->capacity : 4096;
      self->latencies = realloc(self->latencies, self->capacity * sizeof(double));
    }
    self->latencies[self->count++] = now_ms() - start;
  }
  if (fd >= 0)
    close(fd);
  return NULL;
}

int main(int argc, char **argv) {
  FILE *file;
  char body[1 << 19];
  size_t body_size;
  int concurrency, i;
  double seconds, started;
  pthread_t threads[256];
  worker workers[256];
  double *all;
  size_t total = 0;
  long errors = 0;
  if (argc != 6) {
    fprintf(stderr, "usage: http_load PORT PATH BODY_FILE CONCURRENCY SECONDS\n");
    return 2;
  }
  port = atoi(argv[1]);
  file = fopen(argv[3], "rb");
  if (!file) {
    perror(argv[3]);
    return 1;
  }
  body_size = fread(body, 1, sizeof(body), file);
  fclose(file);
  concurrency = atoi(argv[4]);
  if (concurrency < 1 || concurrency > 256)
    return 2;
  seconds = atof(argv[5]);
  request_size = (size_t)snprintf(request, sizeof(request),
                                  "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                  "Content-Type: application/json\r\n"
                                  "Content-Length: %zu\r\n\r\n",
                                  argv[2], body_size);
  memcpy(request + request_size, body, body_size);
  request_size += body_size;
  memset(workers, 0, sizeof(workers));
  started = now_ms();
  stop_at = started + seconds * 1e3;
  for (i = 0; i < concurrency; ++i)
    pthread_create(&threads[i], NULL, run, &workers[i]);
  for (i = 0; i < concurrency; ++i) {
    pthread_join(threads[i], NULL);
    total += workers[i].count;
    errors += workers[i].errors;
  }
  seconds = (now_ms() - started) / 1e3;
  all = malloc((total ? total : 1) * sizeof(double));
  total = 0;
  for (i = 0; i < concurrency; ++i) {
    memcpy(all + total, workers[i].latencies, workers[i].count * sizeof(double));
    total += workers[i].count;
    free(workers[i].latencies);
  }
  qsort(all, total, sizeof(double), compare);
  printf("{\"requests\": %zu, \"errors\": %ld, \"seconds\": %.3f, \"throughput\": %.1f, "
         "\"p50\": %.6f, \"p99\": %.6f, \"min\": %.6f}\n",
         total, errors, seconds, total / seconds, total ? all[total / 2] : 0.0,
         total ? all[(size_t)(total * 0.99)] : 0.0, total ? all[0] : 0.0);
  free(all);
  return 0;
}
