//===- cuvil_bang_emu.h - BANG C and CNRT, emulated on the host -*- C++ -*-===//
//
// Without the Cambricon SDK, Cuvil's generated kernels.mlu and host.cpp
// compile with clang++ against this header. It emulates the BANG C and CNRT
// that Cuvil emits and is strict where hardware is silent: on-chip overflow,
// copies whose pointers are not where the direction says, misaligned vector
// operands, touching an async copy before its __sync, mismatched barriers and
// writes outside cnrtMalloc buffers end the process with one line naming the
// kernel, the task and the fix. Names, values and rules follow Cambricon's
// public headers and mlu-ops; assumed rules say so. Standard library only;
// everything is inline, so several translation units may include it.
//
//===----------------------------------------------------------------------===//

#ifdef __BANG__
#error "cuvil_bang_emu.h emulates BANG C on the host; cncc builds use the SDK"
#endif

#ifndef CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_H
#define CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_H

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

//===----------------------------------------------------------------------===//
// BANG C types, qualifiers and built-in variables
//===----------------------------------------------------------------------===//

typedef _Float16 half;

// On-chip arrays come from CUVIL_NRAM / CUVIL_WRAM / CUVIL_SRAM (below), so
// the qualifiers only need to parse.
#define __mlu_global__
#define __mlu_func__ inline
#define __mlu_shared__
#define __nram__
#define __wram__

// BANG C's values; the LDRAM directions are left out (not emulated).
typedef enum {
  GDRAM2NRAM = 0,
  NRAM2GDRAM = 1,
  GDRAM2WRAM = 4,
  WRAM2GDRAM = 5,
  NRAM2NRAM = 8,
  NRAM2WRAM = 9,
  WRAM2NRAM = 10,
  GDRAM2SRAM = 11,
  SRAM2GDRAM = 12,
  SRAM2NRAM = 15,
  NRAM2SRAM = 16,
  SRAM2WRAM = 17,
  WRAM2SRAM = 18,
  GDRAM2GDRAM = 19,
  SRAM2SRAM = 22
} mluMemcpyDirection_t;

// Per task; cuvil_emu::launch sets them in each task's thread.
inline thread_local int taskId, taskDim, taskIdX, taskIdY, taskIdZ;
inline thread_local int taskDimX, taskDimY, taskDimZ;
inline thread_local int clusterId, clusterDim, coreId, coreDim;

namespace cuvil_emu {

//===----------------------------------------------------------------------===//
// Chip, rules and errors
//===----------------------------------------------------------------------===//

struct Chip {
  const char *name;
  size_t nram_bytes, wram_bytes, sram_bytes;
  int clusters, cores_per_cluster;
};

inline constexpr Chip kMlu270 = {"MLU270", 512 << 10, 1 << 20, 2 << 20, 4, 4};

// Vector operands (MLU2xx): addresses on 64 bytes (mlu-ops WRAM_ALIGN_SIZE,
// NRAMSET_DST_ALIGN_BASE), lengths in whole 128 bytes (NFU_ALIGN_SIZE,
// NRAMSET_ELEM_COUNT_ALIGN_BASE). The cycle operand of __bang_cycle_* follows
// the length rule too (assumed: mlu-ops pads it to NFU_ALIGN_SIZE).
inline constexpr size_t kVectorAlignBytes = 64;
inline constexpr size_t kVectorLengthBytes = 128;
// On-chip buffers start on this boundary, so each is a valid operand.
inline constexpr size_t kOnChipAlignBytes = 64;
// cnrtMalloc buffers start on this boundary, between two guard bands.
inline constexpr size_t kGdramAlignBytes = 128;
inline constexpr size_t kGuardBytes = 256;
// A barrier waited on this long means the cores wait at different ones.
inline constexpr int kBarrierTimeoutSeconds = 300;

// The kernel the calling thread runs, for messages; null on the host.
inline thread_local const char *tls_kernel = nullptr;

inline std::string vstrf(const char *format, va_list args) {
  char text[1024];
  vsnprintf(text, sizeof(text), format, args);
  return text;
}

inline std::string strf(const char *format, ...)
    __attribute__((format(printf, 1, 2)));
inline std::string strf(const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::string text = vstrf(format, args);
  va_end(args);
  return text;
}

[[noreturn]] inline void fail(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/// Reports one line on stderr and aborts: the emulator's only error path.
inline void fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::string message = vstrf(format, args);
  va_end(args);
  static std::mutex mutex; // one report when several cores fail at once
  std::lock_guard<std::mutex> lock(mutex);
  if (tls_kernel)
    fprintf(stderr,
            "cuvil_bang_emu: kernel %s, task %d (cluster %d, core %d): "
            "%s\n",
            tls_kernel, taskId, clusterId, coreId, message.c_str());
  else
    fprintf(stderr, "cuvil_bang_emu: %s\n", message.c_str());
  fflush(stderr);
  std::abort();
}

inline uintptr_t addr(const void *p) { return reinterpret_cast<uintptr_t>(p); }
inline unsigned char *alignUp(unsigned char *p, size_t align) {
  return p + (align - addr(p) % align) % align;
}

//===----------------------------------------------------------------------===//
// Arenas and memory spaces
//===----------------------------------------------------------------------===//

enum class Space { Host, Nram, Wram, Sram, Gdram };

inline const char *spaceName(Space space) {
  static const char *const kNames[] = {"host memory", "NRAM", "WRAM", "SRAM",
                                       "GDRAM"};
  return kNames[int(space)];
}

inline const char *declareMacro(Space space) {
  static const char *const kMacros[] = {"", "CUVIL_NRAM", "CUVIL_WRAM",
                                        "CUVIL_SRAM", "cnrtMalloc"};
  return kMacros[int(space)];
}

struct Allocation {
  const char *name, *file; // literals from the CUVIL_* macros
  int line;
  unsigned char *begin;
  size_t bytes;
};

/// One on-chip memory of the chip's exact size, handed out in declaration
/// order and emptied when a task starts.
struct Arena {
  Space space = Space::Host;
  std::unique_ptr<unsigned char[]> storage;
  unsigned char *base = nullptr;
  size_t size = 0, used = 0;
  std::vector<Allocation> allocations;

  void init(Space s, size_t bytes) {
    space = s;
    size = bytes;
    storage.reset(new unsigned char[bytes + kOnChipAlignBytes]);
    base = alignUp(storage.get(), kOnChipAlignBytes);
  }
  void reset() {
    used = 0;
    allocations.clear();
  }
  bool contains(const void *p) const {
    return addr(p) >= addr(base) && addr(p) < addr(base) + size;
  }
  const Allocation *find(const void *p) const {
    for (const Allocation &a : allocations)
      if (addr(p) >= addr(a.begin) && addr(p) < addr(a.begin) + a.bytes)
        return &a;
    return nullptr;
  }

  unsigned char *allocate(const char *name, const char *file, int line,
                          size_t bytes) {
    // A declaration reached again (a loop, a helper called twice) names the
    // same buffer, as a __nram__ array does under cncc.
    for (const Allocation &a : allocations)
      if (a.line == line && !strcmp(a.name, name) && !strcmp(a.file, file)) {
        if (a.bytes != bytes)
          fail("%s buffer '%s' is declared with %zu bytes and with %zu; "
               "on-chip arrays have a constant size",
               spaceName(space), name, a.bytes, bytes);
        return a.begin;
      }
    size_t offset = (used + kOnChipAlignBytes - 1) & ~(kOnChipAlignBytes - 1);
    if (offset + bytes > size)
      fail("%s overflow: '%s' needs %zu bytes, %zu of %zu bytes in use",
           spaceName(space), name, bytes, used, size);
    // Hardware leaves stale data; NaN bytes make reading it visible.
    memset(base + offset, 0xFF, bytes);
    allocations.push_back({name, file, line, base + offset, bytes});
    used = offset + bytes;
    return base + offset;
  }
};

struct Core {
  Arena nram, wram;
};

struct Cluster {
  Arena sram;
  std::mutex mutex; // its cores declare and look up SRAM concurrently
};

struct GdramBuffer {
  std::unique_ptr<unsigned char[]> storage;
  unsigned char *begin; // what cnrtMalloc returned
  size_t bytes;
};

struct State {
  Chip chip = kMlu270;
  std::vector<std::unique_ptr<Core>> cores; // cluster-major
  std::vector<std::unique_ptr<Cluster>> clusters;
  // Changed by host calls only, which never overlap a launch: kernel
  // threads read it without a lock.
  std::map<uintptr_t, GdramBuffer> gdram; // by begin
  std::set<const void *> queues;
};

inline State &state() {
  static State s;
  return s;
}

/// Configures the emulated chip; generated host code calls it first.
inline void set_chip(const Chip &chip) {
  if (tls_kernel)
    fail("cuvil_emu::set_chip called inside a kernel");
  if (chip.clusters <= 0 || chip.cores_per_cluster <= 0 || !chip.nram_bytes)
    fail("cuvil_emu::set_chip: a chip needs clusters, cores and NRAM");
  state().chip = chip;
  state().cores.clear(); // rebuilt by the next launch
  state().clusters.clear();
}

inline void buildChip(State &s) {
  if (!s.cores.empty())
    return;
  for (int c = 0; c < s.chip.clusters; ++c) {
    s.clusters.push_back(std::make_unique<Cluster>());
    s.clusters.back()->sram.init(Space::Sram, s.chip.sram_bytes);
    for (int k = 0; k < s.chip.cores_per_cluster; ++k) {
      auto core = std::make_unique<Core>();
      core->nram.init(Space::Nram, s.chip.nram_bytes);
      core->wram.init(Space::Wram, s.chip.wram_bytes);
      s.cores.push_back(std::move(core));
    }
  }
}

/// The cnrtMalloc buffer whose allocation, guard bands included, holds p.
inline const GdramBuffer *findGdram(const void *p) {
  const auto &buffers = state().gdram;
  auto it = buffers.upper_bound(addr(p) + kGuardBytes);
  if (it == buffers.begin())
    return nullptr;
  const GdramBuffer &b = (--it)->second;
  return addr(p) < addr(b.begin) + b.bytes + kGuardBytes ? &b : nullptr;
}

struct Range {
  unsigned char *begin, *end;
};

/// An issued __memcpy_async: its source's bytes, landing at a __sync.
struct Pending {
  const char *direction;
  bool io; // touches GDRAM or SRAM: __sync_compute does not wait for it
  std::vector<Range> dst, src;
  std::vector<unsigned char> data;
};

class Barrier;

struct Task {
  Core *core = nullptr;
  Cluster *cluster = nullptr; // null in Block tasks: they have no SRAM
  Barrier *clusterBarrier = nullptr, *jobBarrier = nullptr;
  std::vector<Pending> pending;
};

inline thread_local Task *tls_task = nullptr;

inline Task &currentTask(const char *fn) {
  if (!tls_task)
    fail("%s called outside a kernel launched by cuvil_emu::launch", fn);
  return *tls_task;
}

/// Where a pointer lies: its space, the buffer holding it, and why it is
/// unusable if it is.
struct Where {
  Space space = Space::Host;
  uintptr_t begin = 0, end = 0;
  const char *name = nullptr; // of an on-chip buffer
  std::string problem;
};

/// The buffer, for messages (formatted only when failing).
inline std::string describe(const Where &w) {
  if (w.space == Space::Gdram)
    return strf("a cnrtMalloc buffer of %zu bytes", size_t(w.end - w.begin));
  return strf("%s buffer '%s' (%zu bytes)", spaceName(w.space), w.name,
              size_t(w.end - w.begin));
}

inline Where locate(const Arena &arena, const void *p) {
  Where w;
  w.space = arena.space;
  if (const Allocation *a = arena.find(p)) {
    w.begin = addr(a->begin);
    w.end = w.begin + a->bytes;
    w.name = a->name;
  } else {
    w.problem = strf("is in %s outside every buffer declared with %s",
                     spaceName(arena.space), declareMacro(arena.space));
  }
  return w;
}

inline Where classify(const void *p) {
  State &s = state();
  Task *t = tls_task;
  if (t && t->core->nram.contains(p))
    return locate(t->core->nram, p);
  if (t && t->core->wram.contains(p))
    return locate(t->core->wram, p);
  if (t && t->cluster && t->cluster->sram.contains(p)) {
    std::lock_guard<std::mutex> lock(t->cluster->mutex);
    return locate(t->cluster->sram, p);
  }
  Where w;
  for (const auto &core : s.cores)
    for (const Arena *arena : {&core->nram, &core->wram})
      if (arena->contains(p))
        w.space = arena->space;
  for (const auto &cluster : s.clusters)
    if (cluster->sram.contains(p))
      w.space = Space::Sram;
  if (w.space != Space::Host) {
    w.problem = !t ? "is on-chip memory, which host code cannot address"
                : w.space == Space::Sram && !t->cluster
                    ? "is in SRAM, which Block tasks do not have"
                    : "belongs to another core (NRAM, WRAM) or cluster (SRAM)";
    return w;
  }
  if (const GdramBuffer *b = findGdram(p)) {
    w.space = Space::Gdram;
    w.begin = addr(b->begin);
    w.end = w.begin + b->bytes;
    if (addr(p) < w.begin || addr(p) >= w.end)
      w.problem =
          strf("is %zu bytes %s %s",
               size_t(addr(p) < w.begin ? w.begin - addr(p) : addr(p) - w.end),
               addr(p) < w.begin ? "before the start of" : "past the end of",
               describe(w).c_str());
  }
  return w;
}

//===----------------------------------------------------------------------===//
// Copies and hazards
//===----------------------------------------------------------------------===//

/// The bytes an operation touches: `segments` runs of `size` bytes,
/// `stride` bytes apart.
struct Access {
  unsigned char *p;
  long long size, stride, segments;
  unsigned char *segment(long long i) const { return p + i * stride; }
};

inline bool overlaps(const unsigned char *begin, const unsigned char *end,
                     const std::vector<Range> &ranges) {
  for (const Range &r : ranges)
    if (addr(begin) < addr(r.end) && addr(r.begin) < addr(end))
      return true;
  return false;
}

/// Fails when an access reads or writes a pending async copy's destination,
/// or writes its source, before the __sync that completes the copy.
inline void checkHazards(const char *op, bool write, const Access &a) {
  for (const Pending &p : tls_task->pending)
    for (long long i = 0; i < a.segments; ++i) {
      unsigned char *begin = a.segment(i), *end = begin + a.size;
      bool source = write && overlaps(begin, end, p.src);
      if (!source && !overlaps(begin, end, p.dst))
        continue;
      fail("%s %s %s of a __memcpy_async before the __sync that completes it "
           "(the %s copy of %zu bytes; call %s first)",
           op, write ? "writes into" : "reads",
           source ? "the source" : "the destination", p.direction,
           p.data.size(), p.io ? "__sync_io() or __sync()" : "__sync()");
    }
}

/// Checks that an access lies in `expected`, inside one buffer, and races
/// no pending async copy of the core.
inline void checkAccess(const char *op, const char *role, bool write,
                        const Access &a, Space expected) {
  Where w = classify(a.p);
  if (w.space != expected)
    fail("%s: the %s %p is in %s, not %s (%s %s)", op, role,
         static_cast<void *>(a.p), spaceName(w.space), spaceName(expected),
         expected == Space::Gdram ? "allocate it with" : "declare it with",
         declareMacro(expected));
  if (!w.problem.empty())
    fail("%s: the %s %p %s", op, role, static_cast<void *>(a.p),
         w.problem.c_str());
  long long last = a.stride * (a.segments - 1);
  uintptr_t lo = addr(a.p) + uintptr_t(std::min(0LL, last));
  uintptr_t hi = addr(a.p) + uintptr_t(std::max(0LL, last) + a.size);
  if (hi > w.end || lo < w.begin)
    fail("%s %s outside %s: %zu bytes %s", op, write ? "writes" : "reads",
         describe(w).c_str(), size_t(hi > w.end ? hi - w.end : w.begin - lo),
         hi > w.end ? "after its end" : "before its start");
  checkHazards(op, write, a);
}

struct Direction {
  mluMemcpyDirection_t dir;
  const char *name;
  Space dst, src;
};

inline const Direction *findDirection(mluMemcpyDirection_t dir) {
  using S = Space;
  static const Direction kDirections[] = {
      {GDRAM2NRAM, "GDRAM2NRAM", S::Nram, S::Gdram},
      {NRAM2GDRAM, "NRAM2GDRAM", S::Gdram, S::Nram},
      {GDRAM2WRAM, "GDRAM2WRAM", S::Wram, S::Gdram},
      {WRAM2GDRAM, "WRAM2GDRAM", S::Gdram, S::Wram},
      {NRAM2NRAM, "NRAM2NRAM", S::Nram, S::Nram},
      {NRAM2WRAM, "NRAM2WRAM", S::Wram, S::Nram},
      {WRAM2NRAM, "WRAM2NRAM", S::Nram, S::Wram},
      {GDRAM2SRAM, "GDRAM2SRAM", S::Sram, S::Gdram},
      {SRAM2GDRAM, "SRAM2GDRAM", S::Gdram, S::Sram},
      {SRAM2NRAM, "SRAM2NRAM", S::Nram, S::Sram},
      {NRAM2SRAM, "NRAM2SRAM", S::Sram, S::Nram},
      {SRAM2WRAM, "SRAM2WRAM", S::Wram, S::Sram},
      {WRAM2SRAM, "WRAM2SRAM", S::Sram, S::Wram},
      {GDRAM2GDRAM, "GDRAM2GDRAM", S::Gdram, S::Gdram}};
  for (const Direction &d : kDirections)
    if (d.dir == dir)
      return &d;
  return nullptr;
}

inline std::vector<Range> ranges(const Access &a) {
  std::vector<Range> out;
  for (long long i = 0; i < a.segments; ++i) {
    if (!out.empty() && out.back().end == a.segment(i))
      out.back().end += a.size; // contiguous rows: one range
    else
      out.push_back({a.segment(i), a.segment(i) + a.size});
  }
  return out;
}

/// The unstrided NRAM2NRAM of mtp_2xx takes 64-byte aligned addresses and
/// whole 128 bytes (BANG C's __memcpy alignment table); the strided form
/// takes any byte. Checked on every chip, so that code runs on all.
inline void checkNramToNram(const std::string &op, const void *dst,
                            const void *src, int size) {
  bool aligned = reinterpret_cast<uintptr_t>(dst) % 64 == 0 &&
                 reinterpret_cast<uintptr_t>(src) % 64 == 0;
  if (!aligned || size % 128 != 0)
    fail("%s: unstrided, NRAM2NRAM needs 64-byte aligned addresses and a "
         "size of whole 128 bytes on mtp_2xx (dst %p, src %p, %d bytes); use "
         "the strided form, which takes any byte",
         op.c_str(), dst, src, size);
}

inline void copy(const char *fn, void *dst, const void *src, int size,
                 mluMemcpyDirection_t dir, int dstStride, int srcStride,
                 int segnum, bool async, bool strided) {
  Task &task = currentTask(fn);
  const Direction *d = findDirection(dir);
  if (!d)
    fail("%s: direction %d is not emulated (SRAM2SRAM needs the form with a "
         "destination cluster; LDRAM does not exist here)",
         fn, int(dir));
  std::string op = std::string(fn) + " " + d->name;
  if (size < 0 || segnum < 0)
    fail("%s: size %d and segnum %d must not be negative", op.c_str(), size,
         segnum);
  if (segnum > 65535)
    fail("%s: segnum %d is above 65535 (at most 65536 segments a copy); "
         "split the copy",
         op.c_str(), segnum);
  if (!size)
    return;
  if (dir == NRAM2NRAM && !strided)
    checkNramToNram(op, dst, src, size);
  // segnum counts the segments after the first (mlu-ops passes rows - 1).
  Access to{static_cast<unsigned char *>(dst), size, dstStride, segnum + 1LL};
  Access from{static_cast<unsigned char *>(const_cast<void *>(src)), size,
              srcStride, segnum + 1LL};
  checkAccess(op.c_str(), "source", false, from, d->src);
  checkAccess(op.c_str(), "destination", true, to, d->dst);
  // Read all first: overlapping NRAM2NRAM ranges copy the old bytes.
  std::vector<unsigned char> data;
  for (long long i = 0; i < from.segments; ++i)
    data.insert(data.end(), from.segment(i), from.segment(i) + size);
  // An async NRAM2NRAM runs in order with the vector unit (BANG C).
  if (!async || dir == NRAM2NRAM) {
    for (long long i = 0; i < to.segments; ++i)
      memcpy(to.segment(i), &data[size_t(i * size)], size_t(size));
    return;
  }
  auto onCore = [](Space s) { return s == Space::Nram || s == Space::Wram; };
  task.pending.push_back({d->name, !onCore(d->dst) || !onCore(d->src),
                          ranges(to), ranges(from), std::move(data)});
  for (const Range &r : task.pending.back().dst) // NaN until the __sync
    memset(r.begin, 0xFF, size_t(r.end - r.begin));
}

/// Lands the calling core's pending copies that the __sync variant waits
/// for, in issue order.
inline void complete(const char *fn, bool io) {
  Task &task = currentTask(fn);
  std::vector<Pending> keep;
  for (Pending &p : task.pending) {
    if (p.io && !io) {
      keep.push_back(std::move(p));
      continue;
    }
    const unsigned char *data = p.data.data();
    for (const Range &r : p.dst) {
      memcpy(r.begin, data, size_t(r.end - r.begin));
      data += r.end - r.begin;
    }
  }
  task.pending.swap(keep);
}

template <class T>
inline T *allocOnChip(Space space, long long count, const char *name,
                      const char *file, int line) {
  Task &task = currentTask(declareMacro(space));
  if (count <= 0)
    fail("%s '%s': the element count %lld must be positive",
         declareMacro(space), name, count);
  size_t bytes = size_t(count) * sizeof(T);
  if (space != Space::Sram) {
    Arena &arena = space == Space::Nram ? task.core->nram : task.core->wram;
    return reinterpret_cast<T *>(arena.allocate(name, file, line, bytes));
  }
  if (!task.cluster)
    fail("CUVIL_SRAM '%s' in a Block task: only Union tasks share a "
         "cluster's SRAM; launch as cnrtFuncTypeUnion1 or use NRAM",
         name);
  // The cores of a cluster share each declaration's buffer.
  std::lock_guard<std::mutex> lock(task.cluster->mutex);
  return reinterpret_cast<T *>(
      task.cluster->sram.allocate(name, file, line, bytes));
}

} // namespace cuvil_emu

// Under cncc the generated code defines these as `__nram__ type name[count]`
// and so on.
#define CUVIL_NRAM(type, name, count)                                          \
  type *name = ::cuvil_emu::allocOnChip<type>(                                 \
      ::cuvil_emu::Space::Nram, (count), #name, __FILE__, __LINE__)
#define CUVIL_WRAM(type, name, count)                                          \
  type *name = ::cuvil_emu::allocOnChip<type>(                                 \
      ::cuvil_emu::Space::Wram, (count), #name, __FILE__, __LINE__)
#define CUVIL_SRAM(type, name, count)                                          \
  type *name = ::cuvil_emu::allocOnChip<type>(                                 \
      ::cuvil_emu::Space::Sram, (count), #name, __FILE__, __LINE__)

inline void __memcpy(void *dst, const void *src, int size,
                     mluMemcpyDirection_t dir) {
  cuvil_emu::copy("__memcpy", dst, src, size, dir, 0, 0, 0, false, false);
}
inline void __memcpy(void *dst, const void *src, int size,
                     mluMemcpyDirection_t dir, int dst_stride, int src_stride,
                     int segnum) {
  cuvil_emu::copy("__memcpy", dst, src, size, dir, dst_stride, src_stride,
                  segnum, false, true);
}
inline void __memcpy_async(void *dst, const void *src, int size,
                           mluMemcpyDirection_t dir) {
  cuvil_emu::copy("__memcpy_async", dst, src, size, dir, 0, 0, 0, true,
                  false);
}
inline void __memcpy_async(void *dst, const void *src, int size,
                           mluMemcpyDirection_t dir, int dst_stride,
                           int src_stride, int segnum) {
  cuvil_emu::copy("__memcpy_async", dst, src, size, dir, dst_stride, src_stride,
                  segnum, true, true);
}

// __sync_io waits for the IO DMA (copies touching GDRAM or SRAM),
// __sync_compute for the core's own pipeline. NRAM<->WRAM copies land at
// either: which queue runs them is not documented, so this is lenient.
inline void __sync_io() { cuvil_emu::complete("__sync_io", true); }
inline void __sync_compute() { cuvil_emu::complete("__sync_compute", false); }
inline void __sync() { cuvil_emu::complete("__sync", true); }
inline void __sync_cluster();
inline void __sync_all();
// The cluster's memory core is not emulated: every task is an IPU.
inline bool __is_ipu() { return true; }
inline bool __is_mpu() { return false; }

//===----------------------------------------------------------------------===//
// Vector functions (float and half, NRAM operands)
//===----------------------------------------------------------------------===//

namespace cuvil_emu {

template <class T>
inline void checkLength(const char *fn, const char *what, int n) {
  if (n <= 0)
    fail("%s: %s = %d; the element count must be positive", fn, what, n);
  if (size_t(n) * sizeof(T) % kVectorLengthBytes)
    fail("%s: %s = %d elements of %zu bytes = %zu bytes, not a multiple of "
         "%zu bytes; pad it to a multiple of %zu elements",
         fn, what, n, sizeof(T), size_t(n) * sizeof(T), kVectorLengthBytes,
         kVectorLengthBytes / sizeof(T));
}

template <class T>
inline void checkOperand(const char *fn, const char *role, const T *p, int n,
                         bool write) {
  currentTask(fn);
  if (addr(p) % kVectorAlignBytes)
    fail("%s: %s %p is not %zu-byte aligned; vector operands start on a "
         "%zu-byte boundary (offsets into a buffer: multiples of %zu elements)",
         fn, role, static_cast<const void *>(p), kVectorAlignBytes,
         kVectorAlignBytes, kVectorAlignBytes / sizeof(T));
  Access a{reinterpret_cast<unsigned char *>(const_cast<T *>(p)),
           n * static_cast<long long>(sizeof(T)), 0, 1};
  checkAccess(fn, role, write, a, Space::Nram);
}

// Half operands are computed in float, each result rounded to half.
template <class T, class F>
inline void binary(const char *fn, T *dst, const T *a, const T *b, int n, F f) {
  checkLength<T>(fn, "n", n);
  checkOperand(fn, "src0", a, n, false);
  checkOperand(fn, "src1", b, n, false);
  checkOperand(fn, "dst", dst, n, true);
  for (int i = 0; i < n; ++i)
    dst[i] = T(f(float(a[i]), float(b[i])));
}

template <class T, class F>
inline void unary(const char *fn, T *dst, const T *src, int n, F f) {
  checkLength<T>(fn, "n", n);
  checkOperand(fn, "src", src, n, false);
  checkOperand(fn, "dst", dst, n, true);
  for (int i = 0; i < n; ++i)
    dst[i] = T(f(float(src[i])));
}

// `cycle` (cycleN values) repeats along src's n values.
template <class T, class F>
inline void cycled(const char *fn, T *dst, const T *src, const T *cycle, int n,
                   int cycleN, F f) {
  checkLength<T>(fn, "n", n);
  checkLength<T>(fn, "cycle_n", cycleN);
  if (n % cycleN)
    fail("%s: n = %d is not a multiple of cycle_n = %d", fn, n, cycleN);
  checkOperand(fn, "src", src, n, false);
  checkOperand(fn, "cycle", cycle, cycleN, false);
  checkOperand(fn, "dst", dst, n, true);
  std::vector<T> period(cycle, cycle + cycleN); // dst may overlap it
  for (int i = 0; i < n; ++i)
    dst[i] = T(f(float(src[i]), float(period[size_t(i % cycleN)])));
}

template <class T> inline void fill(T *dst, int n, T value) {
  checkLength<T>("__bang_write_value", "n", n);
  checkOperand("__bang_write_value", "dst", dst, n, true);
  std::fill(dst, dst + n, value);
}

} // namespace cuvil_emu

// One overload per operand type, as in BANG C, so that a scalar argument
// converts to the operands' type. The lambdas compute on floats.
#define CUVIL_EMU_BINARY(T, NAME, EXPR)                                        \
  inline void NAME(T *dst, const T *src0, const T *src1, int n) {              \
    cuvil_emu::binary(#NAME, dst, src0, src1, n,                               \
                      [](float a, float b) { return EXPR; });                  \
  }
#define CUVIL_EMU_SCALAR(T, NAME, EXPR)                                        \
  inline void NAME(T *dst, const T *src, T value, int n) {                     \
    cuvil_emu::unary(#NAME, dst, src, n,                                       \
                     [b = float(value)](float a) { return EXPR; });            \
  }
#define CUVIL_EMU_UNARY(T, NAME, EXPR)                                         \
  inline void NAME(T *dst, const T *src, int n) {                              \
    cuvil_emu::unary(#NAME, dst, src, n, [](float a) { return EXPR; });        \
  }
#define CUVIL_EMU_CYCLE(T, NAME, EXPR)                                         \
  inline void NAME(T *dst, const T *src, const T *cycle, int n, int cycle_n) { \
    cuvil_emu::cycled(#NAME, dst, src, cycle, n, cycle_n,                      \
                      [](float a, float b) { return EXPR; });                  \
  }
// NaN passes through relu, so poisoned data stays visible.
#define CUVIL_EMU_VECTOR_FUNCTIONS(T)                                          \
  CUVIL_EMU_BINARY(T, __bang_add, a + b)                                       \
  CUVIL_EMU_BINARY(T, __bang_sub, a - b)                                       \
  CUVIL_EMU_BINARY(T, __bang_mul, (a * b))                                     \
  CUVIL_EMU_BINARY(T, __bang_maxequal, std::max(a, b))                         \
  CUVIL_EMU_BINARY(T, __bang_minequal, std::min(a, b))                         \
  CUVIL_EMU_SCALAR(T, __bang_add_scalar, a + b)                                \
  CUVIL_EMU_SCALAR(T, __bang_mul_scalar, (a * b))                              \
  CUVIL_EMU_UNARY(T, __bang_active_relu, a < 0.0f ? 0.0f : a)                  \
  CUVIL_EMU_UNARY(T, __bang_relu, a < 0.0f ? 0.0f : a)                         \
  CUVIL_EMU_UNARY(T, __bang_active_exp, std::exp(a))                           \
  CUVIL_EMU_UNARY(T, __bang_active_recip, 1.0f / a)                            \
  CUVIL_EMU_UNARY(T, __bang_active_sigmoid, 1.0f / (1.0f + std::exp(-a)))      \
  CUVIL_EMU_UNARY(T, __bang_active_tanh, std::tanh(a))                         \
  CUVIL_EMU_CYCLE(T, __bang_cycle_add, a + b)                                  \
  CUVIL_EMU_CYCLE(T, __bang_cycle_mul, (a * b))                                \
  inline void __bang_write_value(T *dst, int n, T value) {                     \
    cuvil_emu::fill(dst, n, value);                                            \
  }

CUVIL_EMU_VECTOR_FUNCTIONS(float)
CUVIL_EMU_VECTOR_FUNCTIONS(half)

// Conversions: a float32 row from a float16 one (exact) and back, rounded
// to nearest even (BANG C's _rn). Both rows are vector operands: whole
// 128 bytes of the float16 side, and of the float32 side.
inline void __bang_half2float(float *dst, const half *src, int n) {
  cuvil_emu::checkLength<half>("__bang_half2float", "n", n);
  cuvil_emu::checkOperand("__bang_half2float", "src", src, n, false);
  cuvil_emu::checkOperand("__bang_half2float", "dst", dst, n, true);
  std::vector<half> in(src, src + n); // dst may overlap it
  for (int i = 0; i < n; ++i)
    dst[i] = float(in[size_t(i)]);
}
inline void __bang_float2half_rn(half *dst, const float *src, int n) {
  cuvil_emu::checkLength<half>("__bang_float2half_rn", "n", n);
  cuvil_emu::checkOperand("__bang_float2half_rn", "src", src, n, false);
  cuvil_emu::checkOperand("__bang_float2half_rn", "dst", dst, n, true);
  std::vector<float> in(src, src + n);
  for (int i = 0; i < n; ++i)
    dst[i] = half(in[size_t(i)]);
}

#undef CUVIL_EMU_VECTOR_FUNCTIONS
#undef CUVIL_EMU_BINARY
#undef CUVIL_EMU_SCALAR
#undef CUVIL_EMU_UNARY
#undef CUVIL_EMU_CYCLE

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

#endif // CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_H
