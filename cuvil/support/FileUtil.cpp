#include "cuvil/support/FileUtil.h"

#include "absl/strings/str_cat.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace cuvil {

static absl::Status errnoStatus(int err, absl::string_view what,
                                const std::string &path) {
  std::string message =
      absl::StrCat(what, " '", path, "': ", std::strerror(err));
  switch (err) {
  case ENOENT:
  case ENOTDIR:
    return absl::NotFoundError(message);
  case EACCES:
  case EPERM:
  case EROFS:
    return absl::PermissionDeniedError(message);
  case EISDIR:
    return absl::InvalidArgumentError(message);
  default:
    return absl::InternalError(message);
  }
}

absl::StatusOr<std::string> readFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errnoStatus(errno, "cannot open", path);
  std::string contents;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n == 0)
      break;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::close(fd);
      return errnoStatus(err, "cannot read", path);
    }
    contents.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return contents;
}

absl::Status writeFileAtomically(const std::string &path,
                                 absl::string_view contents) {
  // O_EXCL with mode 0666 (not mkstemp's 0600) so the artifact gets the
  // user's umask like any other file, without touching the process umask.
  static std::atomic<unsigned> counter{0};
  std::string tmpl;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    tmpl = absl::StrCat(path, ".tmp.", ::getpid(), ".", counter++);
    fd = ::open(tmpl.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0)
    return errnoStatus(errno, "cannot create a file beside", path);
  const char *data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      return errnoStatus(err, "cannot write", path);
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    return errnoStatus(err, "cannot write", path);
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    return errnoStatus(err, "cannot write", path);
  }
  return absl::OkStatus();
}

} // namespace cuvil
