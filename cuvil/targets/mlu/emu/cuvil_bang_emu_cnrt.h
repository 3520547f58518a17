//===- cuvil_bang_emu_cnrt.h - CNRT and kernel launch, emulated -*- C++ -*-===//
//
// Part of cuvil_bang_emu.h, which includes it after its core and vector
// functions; not to be included alone. CNRT (devices, queues, memory,
// copies) and the launch of a kernel's tasks as threads, with the cluster
// and job barriers.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_CNRT_H
#define CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_CNRT_H

#ifndef CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_H
#error "include cuvil_bang_emu.h, which includes this part"
#endif

//===----------------------------------------------------------------------===//
// CNRT (CNRT 5/6 names and values)
//===----------------------------------------------------------------------===//

typedef enum {
  cnrtSuccess = 0,
  cnrtErrorNotReady = 1,
  cnrtErrorDeviceInvalid = 100005,
  cnrtErrorArgsInvalid = 100006,
  cnrtErrorNoMem = 100100,
  cnrtErrorMemcpyDirectionInvalid = 632013
} cnrtRet_t;

typedef enum {
  cnrtMemcpyHostToDev = 0,
  cnrtMemcpyDevToDev,
  cnrtMemcpyDevToHost,
  cnrtMemcpyHostToHost,
  cnrtMemcpyPeerToPeer,
  cnrtMemcpyNoDirection
} cnrtMemTransDir_t;

// The value is the number of cores the type runs as one job.
typedef enum {
  cnrtFuncTypeBlock = 1,
  cnrtFuncTypeBlock0 = cnrtFuncTypeBlock,
  cnrtFuncTypeBlock1 = cnrtFuncTypeBlock0 + 1,
  cnrtFuncTypeUnion1 = 4,
  cnrtFuncTypeUnion2 = 8,
  cnrtFuncTypeUnion4 = 16,
  cnrtFuncTypeUnion8 = 32,
  cnrtFuncTypeUnion16 = 64,
  cnrtFuncTypeMutable = -1
} cnrtFunctionType_t;

typedef struct {
  unsigned int x, y, z;
} cnrtDim3_t;

struct cnrtQueue {};
typedef struct cnrtQueue *cnrtQueue_t;

namespace cuvil_emu {

inline void hostOnly(const char *fn) {
  if (tls_kernel)
    fail("%s called inside a kernel; CNRT runs on the host", fn);
}

inline unsigned char guardByte(size_t i) {
  return (unsigned char)(0xA5 ^ i * 29);
}

/// Fails if anything wrote into the guard bands around a cnrtMalloc buffer.
inline void checkGuards(const char *when) {
  for (const auto &entry : state().gdram) {
    const GdramBuffer &b = entry.second;
    size_t before = 0, after = 0;
    for (size_t i = 0; i < kGuardBytes; ++i) {
      if (*(b.begin - 1 - i) != guardByte(i))
        before = i + 1;
      if (b.begin[b.bytes + i] != guardByte(kGuardBytes + i))
        after = i + 1;
    }
    if (after || before)
      fail("%s: a kernel wrote outside a cnrtMalloc buffer of %zu bytes: %zu "
           "bytes %s",
           when, b.bytes, after ? after : before,
           after ? "after its end" : "before its start");
  }
}

inline void checkQueue(const char *fn, cnrtQueue_t queue) {
  if (queue && !state().queues.count(queue))
    fail("%s: %p is not a live queue from cnrtQueueCreate", fn,
         static_cast<void *>(queue));
}

/// A cnrtMemcpy range: inside one cnrtMalloc buffer, or clear of them all.
inline void checkHostRange(const std::string &op, const char *role, bool write,
                           const void *p, size_t bytes, bool device) {
  const GdramBuffer *b = findGdram(p);
  if (!device && (b || findGdram(static_cast<const char *>(p) + bytes - 1)))
    fail("%s: the %s %p is in a cnrtMalloc buffer; use a direction that says "
         "so",
         op.c_str(), role, p);
  if (device &&
      (!b || addr(p) < addr(b->begin) || addr(p) >= addr(b->begin) + b->bytes))
    fail("%s: the %s %p is not in a cnrtMalloc buffer", op.c_str(), role, p);
  if (device && addr(p) + bytes > addr(b->begin) + b->bytes)
    fail("%s %s outside a cnrtMalloc buffer of %zu bytes: %zu bytes after its "
         "end",
         op.c_str(), write ? "writes" : "reads", b->bytes,
         size_t(addr(p) + bytes - addr(b->begin) - b->bytes));
}

} // namespace cuvil_emu

inline const char *cnrtGetErrorStr(cnrtRet_t ret) {
  static const std::pair<cnrtRet_t, const char *> kTexts[] = {
      {cnrtSuccess, "cnrtSuccess: no error"},
      {cnrtErrorNotReady, "cnrtErrorNotReady: busy"},
      {cnrtErrorDeviceInvalid, "cnrtErrorDeviceInvalid: no such device"},
      {cnrtErrorArgsInvalid, "cnrtErrorArgsInvalid: invalid argument"},
      {cnrtErrorNoMem, "cnrtErrorNoMem: out of device memory"},
      {cnrtErrorMemcpyDirectionInvalid,
       "cnrtErrorMemcpyDirectionInvalid: not a cnrtMemTransDir_t"}};
  for (const auto &text : kTexts)
    if (text.first == ret)
      return text.second;
  return "unknown CNRT error";
}

// Every failure aborts, so no error is ever left to report.
inline cnrtRet_t cnrtGetLastError() { return cnrtSuccess; }

// One emulated device.
inline cnrtRet_t cnrtSetDevice(int device) {
  cuvil_emu::hostOnly("cnrtSetDevice");
  return device == 0 ? cnrtSuccess : cnrtErrorDeviceInvalid;
}

inline cnrtRet_t cnrtQueueCreate(cnrtQueue_t *queue) {
  cuvil_emu::hostOnly("cnrtQueueCreate");
  if (!queue)
    return cnrtErrorArgsInvalid;
  *queue = new cnrtQueue();
  cuvil_emu::state().queues.insert(*queue);
  return cnrtSuccess;
}

inline cnrtRet_t cnrtQueueDestroy(cnrtQueue_t queue) {
  cuvil_emu::hostOnly("cnrtQueueDestroy");
  cuvil_emu::checkQueue("cnrtQueueDestroy", queue);
  cuvil_emu::state().queues.erase(queue);
  delete queue;
  return cnrtSuccess;
}

// Launches run to completion: the queue is always drained.
inline cnrtRet_t cnrtQueueSync(cnrtQueue_t queue) {
  cuvil_emu::hostOnly("cnrtQueueSync");
  cuvil_emu::checkQueue("cnrtQueueSync", queue);
  cuvil_emu::checkGuards("cnrtQueueSync");
  return cnrtSuccess;
}

inline cnrtRet_t cnrtMalloc(void **ptr, size_t bytes) {
  using namespace cuvil_emu;
  hostOnly("cnrtMalloc");
  if (!ptr || !bytes)
    return cnrtErrorArgsInvalid;
  GdramBuffer b;
  b.storage.reset(new (
      std::nothrow) unsigned char[kGdramAlignBytes + 2 * kGuardBytes + bytes]);
  if (!b.storage)
    return cnrtErrorNoMem;
  b.begin = alignUp(b.storage.get() + kGuardBytes, kGdramAlignBytes);
  b.bytes = bytes;
  for (size_t i = 0; i < kGuardBytes; ++i) {
    *(b.begin - 1 - i) = guardByte(i);
    b.begin[bytes + i] = guardByte(kGuardBytes + i);
  }
  memset(b.begin, 0xFF, bytes); // uninitialized memory reads as NaN
  *ptr = b.begin;
  state().gdram[addr(b.begin)] = std::move(b);
  return cnrtSuccess;
}

inline cnrtRet_t cnrtFree(void *ptr) {
  using namespace cuvil_emu;
  hostOnly("cnrtFree");
  if (!ptr)
    return cnrtSuccess;
  checkGuards("cnrtFree");
  if (!state().gdram.erase(addr(ptr)))
    fail("cnrtFree: %p is not the start of a live cnrtMalloc buffer (freed "
         "twice, or not from cnrtMalloc)",
         ptr);
  return cnrtSuccess;
}

inline cnrtRet_t cnrtMemcpy(void *dst, void *src, size_t bytes,
                            cnrtMemTransDir_t dir) {
  using namespace cuvil_emu;
  hostOnly("cnrtMemcpy");
  if (dir < cnrtMemcpyHostToDev || dir > cnrtMemcpyNoDirection)
    return cnrtErrorMemcpyDirectionInvalid;
  if (dir == cnrtMemcpyPeerToPeer)
    fail("cnrtMemcpy: cnrtMemcpyPeerToPeer is not emulated (one device)");
  if (!bytes)
    return cnrtSuccess;
  if (!dst || !src)
    return cnrtErrorArgsInvalid;
  checkGuards("cnrtMemcpy");
  bool toDev = dir == cnrtMemcpyHostToDev || dir == cnrtMemcpyDevToDev;
  bool fromDev = dir == cnrtMemcpyDevToHost || dir == cnrtMemcpyDevToDev;
  if (dir == cnrtMemcpyNoDirection) { // the runtime tells by the addresses
    toDev = findGdram(dst);
    fromDev = findGdram(src);
  }
  std::string op = std::string("cnrtMemcpy ") + (fromDev ? "Dev" : "Host") +
                   "To" + (toDev ? "Dev" : "Host");
  checkHostRange(op, "source", false, src, bytes, fromDev);
  checkHostRange(op, "destination", true, dst, bytes, toDev);
  memmove(dst, src, bytes);
  return cnrtSuccess;
}

//===----------------------------------------------------------------------===//
// Launch and barriers
//===----------------------------------------------------------------------===//

namespace cuvil_emu {

/// A reusable barrier over the tasks of a cluster or of a Union job. A task
/// returning from the kernel leaves it: waiters that only departed tasks
/// could release would hang on hardware, and fail here.
class Barrier {
public:
  Barrier(int parties, const char *name) : parties_(parties), name_(name) {}

  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const unsigned generation = generation_;
    if (++arrived_ == parties_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    checkStuck();
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::seconds(kBarrierTimeoutSeconds);
    while (generation_ == generation)
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout &&
          generation_ == generation)
        fail("%s waited %d s: the other cores wait at a different barrier",
             name_, kBarrierTimeoutSeconds);
  }

  void leave() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++left_;
    checkStuck();
  }

private:
  void checkStuck() const {
    if (arrived_ > 0 && arrived_ + left_ == parties_)
      fail("%s: %d of the %d cores wait at it and the others returned from "
           "the kernel; every core must call %s the same number of times",
           name_, arrived_, parties_, name_);
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  const int parties_;
  const char *name_;
  int arrived_ = 0, left_ = 0;
  unsigned generation_ = 0;
};

/// Where a task runs (indices into State's cores and clusters) and what it
/// sees.
struct Placement {
  int task = 0, core = 0, cluster = 0, clusterId = 0, coreId = 0;
  Barrier *clusterBarrier = nullptr, *jobBarrier = nullptr;
};

inline void runTask(const char *kernel, cnrtDim3_t dim, int unionN, Placement p,
                    const std::function<void()> &body) {
  State &s = state();
  Task task;
  task.core = s.cores[size_t(p.core)].get();
  task.cluster = unionN ? s.clusters[size_t(p.cluster)].get() : nullptr;
  task.clusterBarrier = p.clusterBarrier;
  task.jobBarrier = p.jobBarrier;
  task.core->nram.reset();
  task.core->wram.reset();
  taskDimX = int(dim.x);
  taskDimY = int(dim.y);
  taskDimZ = int(dim.z);
  taskDim = taskDimX * taskDimY * taskDimZ;
  taskId = p.task;
  taskIdX = p.task % taskDimX;
  taskIdY = p.task / taskDimX % taskDimY;
  taskIdZ = p.task / (taskDimX * taskDimY);
  // Block: no cluster, one core (mlu-ops CLUSTER_DIM_OF_BLOCK = 0); UnionN:
  // the N clusters of the task's job.
  clusterDim = unionN;
  clusterId = p.clusterId;
  coreDim = unionN ? s.chip.cores_per_cluster : 1;
  coreId = p.coreId;
  tls_task = &task;
  tls_kernel = kernel;
  body();
  if (!task.pending.empty())
    fail("the task returned with %zu __memcpy_async not completed by a "
         "__sync (the first: %s of %zu bytes); call __sync() before returning",
         task.pending.size(), task.pending[0].direction,
         task.pending[0].data.size());
  for (Barrier *barrier : {p.clusterBarrier, p.jobBarrier})
    if (barrier)
      barrier->leave();
  tls_task = nullptr;
  tls_kernel = nullptr;
}

/// The tasks of one wave: Block tasks one per core; UnionN jobs (N clusters
/// of cores, fresh SRAM and barriers) as many as the chip holds.
inline void placeWave(State &s, int unionN, int first, int count,
                      std::vector<Placement> &places,
                      std::vector<std::unique_ptr<Barrier>> &barriers) {
  const int cpc = s.chip.cores_per_cluster, unit = unionN * cpc;
  for (int j = 0; j < count; ++j) {
    if (!unionN) {
      Placement p;
      p.task = first + j;
      p.core = j;
      places.push_back(p);
      continue;
    }
    barriers.push_back(std::make_unique<Barrier>(unit, "__sync_all"));
    Barrier *job = barriers.back().get();
    for (int k = 0; k < unit; ++k) {
      Placement p;
      p.task = (first + j) * unit + k;
      p.clusterId = k / cpc;
      p.coreId = k % cpc;
      p.cluster = j * unionN + p.clusterId;
      p.core = p.cluster * cpc + p.coreId;
      if (!p.coreId) {
        s.clusters[size_t(p.cluster)]->sram.reset();
        barriers.push_back(std::make_unique<Barrier>(cpc, "__sync_cluster"));
      }
      p.clusterBarrier = barriers.back().get(); // this cluster's
      p.jobBarrier = job;
      places.push_back(p);
    }
  }
}

/// Runs every task of a launch as a thread, in waves the chip can hold,
/// then checks the guard bands.
inline void runLaunch(const char *kernel, cnrtDim3_t dim,
                      cnrtFunctionType_t type, cnrtQueue_t queue,
                      const std::function<void()> &body) {
  if (tls_kernel)
    fail("kernel %s launched inside kernel %s", kernel, tls_kernel);
  std::string what = strf("launch of kernel %s", kernel);
  checkQueue(what.c_str(), queue);
  State &s = state();
  const long long tasks = (long long)dim.x * dim.y * dim.z;
  if (tasks <= 0 || tasks > (1 << 30))
    fail("%s: dim {%u, %u, %u} gives %lld tasks", what.c_str(), dim.x, dim.y,
         dim.z, tasks);
  int unionN = 0;
  for (int n = 1; n <= 16; n *= 2)
    if (type == n * cnrtFuncTypeUnion1)
      unionN = n;
  if (type != cnrtFuncTypeBlock && !unionN)
    fail("%s: function type %d is not emulated; use cnrtFuncTypeBlock or "
         "cnrtFuncTypeUnion1/2/4/8/16",
         what.c_str(), int(type));
  if (unionN > s.chip.clusters)
    fail("%s: Union%d needs %d clusters at once; %s has %d", what.c_str(),
         unionN, unionN, s.chip.name, s.chip.clusters);
  const int cpc = s.chip.cores_per_cluster;
  const int unit = unionN ? unionN * cpc : 1;
  if (dim.x % unsigned(unit))
    fail("%s: Union%d runs %d x %d cores as one job, so dim.x = %u must be "
         "a multiple of %d (taskDim = %lld)",
         what.c_str(), unionN, unionN, cpc, dim.x, unit, tasks);
  buildChip(s);
  const int jobs = int(tasks / unit);
  const int perWave = unionN ? s.chip.clusters / unionN : s.chip.clusters * cpc;
  for (int first = 0; first < jobs; first += perWave) {
    std::vector<Placement> places;
    std::vector<std::unique_ptr<Barrier>> barriers;
    placeWave(s, unionN, first, std::min(perWave, jobs - first), places,
              barriers);
    std::vector<std::thread> threads;
    for (const Placement &p : places)
      threads.emplace_back(runTask, kernel, dim, unionN, p, std::cref(body));
    for (std::thread &t : threads)
      t.join();
  }
  checkGuards(strf("after kernel %s", kernel).c_str());
}

/// Runs kernel(args...) on every task, synchronously (an in-order queue run
/// eagerly).
template <class Kernel, class... Args>
inline void launch(const char *name, Kernel kernel, cnrtDim3_t dim,
                   cnrtFunctionType_t type, cnrtQueue_t queue, Args... args) {
  runLaunch(name, dim, type, queue, [&] { kernel(args...); });
}

} // namespace cuvil_emu

// Block tasks skip both barriers, as BANG C does (clusterDim == 0).
inline void __sync_cluster() {
  if (cuvil_emu::Barrier *b =
          cuvil_emu::currentTask("__sync_cluster").clusterBarrier)
    b->wait();
}

// Every task of the UnionN job: its N clusters.
inline void __sync_all() {
  if (cuvil_emu::Barrier *b = cuvil_emu::currentTask("__sync_all").jobBarrier)
    b->wait();
}

#endif // CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_CNRT_H
