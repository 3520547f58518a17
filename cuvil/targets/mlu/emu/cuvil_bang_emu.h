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
// everything is inline, so several translation units may include it. This
// file (types, chip rules, arenas, copies) includes the other two parts:
// cuvil_bang_emu_vector.h (the __bang_* functions) and cuvil_bang_emu_cnrt.h
// (CNRT and the launch).
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
#include <limits>
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

// The vector functions, then CNRT and the launch: beside this file in the
// repository and in every MLU project folder.
#include "cuvil_bang_emu_vector.h"
#include "cuvil_bang_emu_cnrt.h"

#endif // CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_H
