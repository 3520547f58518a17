//===- EmulatorTest.cpp - Tests of the BANG C / CNRT emulation ------------===//
//
// Every check of cuvil_bang_emu.h provoked once (death tests on the exact
// message), and the semantics generated code relies on, on exact values.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/mlu/emu/cuvil_bang_emu.h"

#include "gtest/gtest.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace {

/// A cnrtMalloc buffer of n values, freed at scope exit.
template <class T> class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t n) : n_(n) {
    EXPECT_EQ(cnrtMalloc(reinterpret_cast<void **>(&ptr_), n * sizeof(T)),
              cnrtSuccess);
  }
  ~DeviceBuffer() { cnrtFree(ptr_); }
  T *get() const { return ptr_; }
  void upload(const std::vector<T> &values) {
    ASSERT_EQ(values.size(), n_);
    ASSERT_EQ(cnrtMemcpy(ptr_, const_cast<T *>(values.data()), n_ * sizeof(T),
                         cnrtMemcpyHostToDev),
              cnrtSuccess);
  }
  std::vector<T> download() const {
    std::vector<T> values(n_);
    EXPECT_EQ(
        cnrtMemcpy(values.data(), ptr_, n_ * sizeof(T), cnrtMemcpyDevToHost),
        cnrtSuccess);
    return values;
  }

private:
  T *ptr_ = nullptr;
  size_t n_;
};

constexpr cnrtDim3_t kOneTask = {1, 1, 1};
constexpr cnrtDim3_t kOneCluster = {4, 1, 1};

bool isPoison(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits == 0xFFFFFFFFu;
}

// Death tests re-run the binary: the kernels below run threads.
class EmulatorDeathTest : public testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

//===----------------------------------------------------------------------===//
// Kernels that break a rule
//===----------------------------------------------------------------------===//

__mlu_global__ void NramOverflow() {
  CUVIL_NRAM(float, a, 100000);
  CUVIL_NRAM(float, b, 100000);
  (void)a;
  (void)b;
}

__mlu_global__ void WramOverflow() {
  CUVIL_WRAM(float, w, 300000);
  (void)w;
}

__mlu_global__ void SramOverflow() {
  CUVIL_SRAM(float, s, 300000);
  CUVIL_SRAM(float, t, 300000);
  (void)s;
  (void)t;
}

__mlu_global__ void TwoKiBOfNram() {
  CUVIL_NRAM(char, a, 2048);
  (void)a;
}

__mlu_global__ void CopyIntoWram(float *in) {
  CUVIL_WRAM(float, w, 32);
  __memcpy(w, in, 32 * sizeof(float), GDRAM2NRAM);
}

__mlu_global__ void CopyFromHost(float *host) {
  CUVIL_NRAM(float, a, 32);
  __memcpy(a, host, 32 * sizeof(float), GDRAM2NRAM);
}

__mlu_global__ void CopySwapped(float *out) {
  CUVIL_NRAM(float, a, 32);
  __memcpy(out, a, 32 * sizeof(float), GDRAM2NRAM);
}

__mlu_global__ void CopyPastEnd(float *out) {
  CUVIL_NRAM(float, a, 64);
  __bang_write_value(a, 64, 1.0f);
  __memcpy(out + 32, a, 64 * sizeof(float), NRAM2GDRAM);
}

__mlu_global__ void RawWritePastEnd(float *out) { out[64 + 3] = 1.0f; }
__mlu_global__ void RawWriteBeforeStart(float *out) { out[-1] = 1.0f; }

__mlu_global__ void MisalignedAdd() {
  CUVIL_NRAM(float, a, 64);
  __bang_add(a + 1, a + 32, a + 32, 32);
}

__mlu_global__ void UnstridedNramCopyOfPartRow() {
  CUVIL_NRAM(float, a, 64);
  __memcpy(a + 32, a + 1, 12, NRAM2NRAM);
}

__mlu_global__ void StridedNramCopyOfPartRow() {
  CUVIL_NRAM(float, a, 64);
  __bang_write_value(a, 64, 1.0f);
  __memcpy(a + 33, a + 1, 12, NRAM2NRAM, 12, 12, 0);
  __memcpy(a + 32, a, 128, NRAM2NRAM); // aligned, whole 128 bytes: fine
}

__mlu_global__ void UnpaddedCount() {
  CUVIL_NRAM(float, a, 64);
  __bang_add(a, a, a, 40);
}

__mlu_global__ void UnpaddedHalfCount() {
  CUVIL_NRAM(half, h, 64);
  __bang_mul_scalar(h, h, 2.0f, 32);
}

__mlu_global__ void VectorOnWram() {
  CUVIL_NRAM(float, a, 32);
  CUVIL_WRAM(float, w, 32);
  __bang_add(a, w, a, 32);
}

__mlu_global__ void VectorPastBuffer() {
  CUVIL_NRAM(float, a, 32);
  __bang_add(a, a, a, 64);
}

__mlu_global__ void AsyncReadByVector(float *in) {
  CUVIL_NRAM(float, a, 32);
  CUVIL_NRAM(float, b, 32);
  __memcpy_async(a, in, 32 * sizeof(float), GDRAM2NRAM);
  __bang_add(b, a, a, 32);
  __sync();
}

__mlu_global__ void AsyncReadByCopy(float *out, float *in) {
  CUVIL_NRAM(float, a, 32);
  __memcpy_async(a, in, 32 * sizeof(float), GDRAM2NRAM);
  __memcpy(out, a, 32 * sizeof(float), NRAM2GDRAM);
  __sync();
}

__mlu_global__ void AsyncWriteIntoDestination(float *in) {
  CUVIL_NRAM(float, a, 32);
  __memcpy_async(a, in, 32 * sizeof(float), GDRAM2NRAM);
  __bang_write_value(a, 32, 0.0f);
  __sync();
}

__mlu_global__ void AsyncWriteIntoSource(float *out) {
  CUVIL_NRAM(float, a, 32);
  __bang_write_value(a, 32, 1.0f);
  __memcpy_async(out, a, 32 * sizeof(float), NRAM2GDRAM);
  __bang_write_value(a, 32, 0.0f);
  __sync();
}

__mlu_global__ void SyncComputeThenRead(float *in) {
  CUVIL_NRAM(float, a, 32);
  CUVIL_NRAM(float, b, 32);
  __memcpy_async(a, in, 32 * sizeof(float), GDRAM2NRAM);
  __sync_compute(); // waits for the vector unit, not for the DMA
  __bang_add(b, a, a, 32);
  __sync();
}

__mlu_global__ void ReturnWithPendingCopy(float *in) {
  CUVIL_NRAM(float, a, 32);
  __memcpy_async(a, in, 32 * sizeof(float), GDRAM2NRAM);
}

__mlu_global__ void SramInBlockTask() {
  CUVIL_SRAM(float, s, 32);
  (void)s;
}

__mlu_global__ void OnlyCoreZeroSyncs() {
  if (coreId == 0)
    __sync_cluster();
}

__mlu_global__ void Nothing() {}

//===----------------------------------------------------------------------===//
// Each check, provoked
//===----------------------------------------------------------------------===//

TEST_F(EmulatorDeathTest, NramOverflowNamesTheBufferAndTheSpaceInUse) {
  EXPECT_DEATH(cuvil_emu::launch("NramOverflow", NramOverflow, kOneTask,
                                 cnrtFuncTypeBlock, nullptr),
               "cuvil_bang_emu: kernel NramOverflow, task 0 \\(cluster 0, "
               "core 0\\): NRAM overflow: 'b' needs 400000 bytes, 400000 of "
               "524288 bytes in use");
}

TEST_F(EmulatorDeathTest, WramOverflow) {
  EXPECT_DEATH(cuvil_emu::launch("WramOverflow", WramOverflow, kOneTask,
                                 cnrtFuncTypeBlock, nullptr),
               "WRAM overflow: 'w' needs 1200000 bytes, 0 of 1048576 bytes "
               "in use");
}

TEST_F(EmulatorDeathTest, SramOverflowCountsTheClustersSharedBuffers) {
  EXPECT_DEATH(cuvil_emu::launch("SramOverflow", SramOverflow, kOneCluster,
                                 cnrtFuncTypeUnion1, nullptr),
               "task [0-3] \\(cluster 0, core [0-3]\\): SRAM overflow: 't' "
               "needs 1200000 bytes, 1200000 of 2097152 bytes in use");
}

TEST_F(EmulatorDeathTest, SetChipSetsTheArenaSizes) {
  EXPECT_DEATH(
      {
        cuvil_emu::set_chip({"tiny", 1024, 1024, 1024, 1, 2});
        cuvil_emu::launch("TwoKiBOfNram", TwoKiBOfNram, kOneTask,
                          cnrtFuncTypeBlock, nullptr);
      },
      "NRAM overflow: 'a' needs 2048 bytes, 0 of 1024 bytes in use");
}

TEST_F(EmulatorDeathTest, SramInABlockTask) {
  EXPECT_DEATH(cuvil_emu::launch("SramInBlockTask", SramInBlockTask, kOneTask,
                                 cnrtFuncTypeBlock, nullptr),
               "CUVIL_SRAM 's' in a Block task: only Union tasks share a "
               "cluster's SRAM");
}

TEST_F(EmulatorDeathTest, CopyWhoseDestinationIsNotWhereTheDirectionSays) {
  DeviceBuffer<float> in(32);
  EXPECT_DEATH(cuvil_emu::launch("CopyIntoWram", CopyIntoWram, kOneTask,
                                 cnrtFuncTypeBlock, nullptr, in.get()),
               "__memcpy GDRAM2NRAM: the destination 0x[0-9a-f]+ is in WRAM, "
               "not NRAM");
}

TEST_F(EmulatorDeathTest, CopyWhoseSourceIsNotWhereTheDirectionSays) {
  std::vector<float> host(32);
  EXPECT_DEATH(cuvil_emu::launch("CopyFromHost", CopyFromHost, kOneTask,
                                 cnrtFuncTypeBlock, nullptr, host.data()),
               "__memcpy GDRAM2NRAM: the source 0x[0-9a-f]+ is in host "
               "memory, not GDRAM \\(allocate it with cnrtMalloc\\)");
  DeviceBuffer<float> out(32);
  EXPECT_DEATH(cuvil_emu::launch("CopySwapped", CopySwapped, kOneTask,
                                 cnrtFuncTypeBlock, nullptr, out.get()),
               "__memcpy GDRAM2NRAM: the source 0x[0-9a-f]+ is in NRAM, not "
               "GDRAM");
}

TEST_F(EmulatorDeathTest, CopyPastTheEndOfACnrtMallocBuffer) {
  DeviceBuffer<float> out(64);
  EXPECT_DEATH(cuvil_emu::launch("CopyPastEnd", CopyPastEnd, kOneTask,
                                 cnrtFuncTypeBlock, nullptr, out.get()),
               "__memcpy NRAM2GDRAM writes outside a cnrtMalloc buffer of 256 "
               "bytes: 128 bytes after its end");
}

TEST_F(EmulatorDeathTest, GuardBandsCatchRawWritesOutsideABuffer) {
  DeviceBuffer<float> out(64);
  EXPECT_DEATH(cuvil_emu::launch("RawWritePastEnd", RawWritePastEnd, kOneTask,
                                 cnrtFuncTypeBlock, nullptr, out.get()),
               "cuvil_bang_emu: after kernel RawWritePastEnd: a kernel wrote "
               "outside a cnrtMalloc buffer of 256 bytes: 16 bytes after its "
               "end");
  EXPECT_DEATH(cuvil_emu::launch("RawWriteBeforeStart", RawWriteBeforeStart,
                                 kOneTask, cnrtFuncTypeBlock, nullptr,
                                 out.get()),
               "a kernel wrote outside a cnrtMalloc buffer of 256 bytes: 4 "
               "bytes before its start");
}

TEST_F(EmulatorDeathTest, VectorOperandOnAMisalignedPointer) {
  EXPECT_DEATH(cuvil_emu::launch("MisalignedAdd", MisalignedAdd, kOneTask,
                                 cnrtFuncTypeBlock, nullptr),
               "__bang_add: dst 0x[0-9a-f]+ is not 64-byte aligned; vector "
               "operands start on a 64-byte boundary \\(offsets into a "
               "buffer: multiples of 16 elements\\)");
}

TEST_F(EmulatorDeathTest, StridedCopyOfTooManySegments) {
  DeviceBuffer<float> a(70000), b(70000);
  EXPECT_DEATH(cuvil_emu::launch(
                   "TooManySegments",
                   [&] {
                     __memcpy(a.get(), b.get(), 4, GDRAM2GDRAM, 4, 4, 65536);
                   },
                   kOneTask, cnrtFuncTypeBlock, nullptr),
               "__memcpy GDRAM2GDRAM: segnum 65536 is above 65535 \\(at most "
               "65536 segments a copy\\); split the copy");
}

TEST_F(EmulatorDeathTest, UnstridedNramToNramOfAPartialRow) {
  EXPECT_DEATH(cuvil_emu::launch("UnstridedNramCopyOfPartRow",
                                 UnstridedNramCopyOfPartRow, kOneTask,
                                 cnrtFuncTypeBlock, nullptr),
               "__memcpy NRAM2NRAM: unstrided, NRAM2NRAM needs 64-byte "
               "aligned addresses and a size of whole 128 bytes on mtp_2xx "
               "\\(dst 0x[0-9a-f]+, src 0x[0-9a-f]+, 12 bytes\\); use the "
               "strided form");
  cuvil_emu::launch("StridedNramCopyOfPartRow", StridedNramCopyOfPartRow,
                    kOneTask, cnrtFuncTypeBlock, nullptr);
}

TEST_F(EmulatorDeathTest, VectorLengthNotAWholeNumberOf128Bytes) {
  EXPECT_DEATH(cuvil_emu::launch("UnpaddedCount", UnpaddedCount, kOneTask,
                                 cnrtFuncTypeBlock, nullptr),
               "__bang_add: n = 40 elements of 4 bytes = 160 bytes, not a "
               "multiple of 128 bytes; pad it to a multiple of 32 elements");
  EXPECT_DEATH(cuvil_emu::launch("UnpaddedHalfCount", UnpaddedHalfCount,
                                 kOneTask, cnrtFuncTypeBlock, nullptr),
               "__bang_mul_scalar: n = 32 elements of 2 bytes = 64 bytes, not "
               "a multiple of 128 bytes; pad it to a multiple of 64 elements");
}

TEST_F(EmulatorDeathTest, VectorOperandOutsideNram) {
  EXPECT_DEATH(cuvil_emu::launch("VectorOnWram", VectorOnWram, kOneTask,
                                 cnrtFuncTypeBlock, nullptr),
               "__bang_add: the src0 0x[0-9a-f]+ is in WRAM, not NRAM");
  EXPECT_DEATH(cuvil_emu::launch("VectorPastBuffer", VectorPastBuffer, kOneTask,
                                 cnrtFuncTypeBlock, nullptr),
               "__bang_add reads outside NRAM buffer 'a' \\(128 bytes\\): 128 "
               "bytes after its end");
}

TEST_F(EmulatorDeathTest, ReadingAnAsyncDestinationBeforeItsSync) {
  DeviceBuffer<float> in(32), out(32);
  EXPECT_DEATH(cuvil_emu::launch("AsyncReadByVector", AsyncReadByVector,
                                 kOneTask, cnrtFuncTypeBlock, nullptr,
                                 in.get()),
               "__bang_add reads the destination of a __memcpy_async before "
               "the __sync that completes it \\(the GDRAM2NRAM copy of 128 "
               "bytes; call __sync_io\\(\\) or __sync\\(\\) first\\)");
  EXPECT_DEATH(cuvil_emu::launch("AsyncReadByCopy", AsyncReadByCopy, kOneTask,
                                 cnrtFuncTypeBlock, nullptr, out.get(),
                                 in.get()),
               "__memcpy NRAM2GDRAM reads the destination of a "
               "__memcpy_async before the __sync that completes it");
  EXPECT_DEATH(cuvil_emu::launch("SyncComputeThenRead", SyncComputeThenRead,
                                 kOneTask, cnrtFuncTypeBlock, nullptr,
                                 in.get()),
               "__bang_add reads the destination of a __memcpy_async");
}

TEST_F(EmulatorDeathTest, WritingAnAsyncCopysRangesBeforeItsSync) {
  DeviceBuffer<float> in(32), out(32);
  EXPECT_DEATH(cuvil_emu::launch("AsyncWriteIntoDestination",
                                 AsyncWriteIntoDestination, kOneTask,
                                 cnrtFuncTypeBlock, nullptr, in.get()),
               "__bang_write_value writes into the destination of a "
               "__memcpy_async before the __sync");
  EXPECT_DEATH(cuvil_emu::launch("AsyncWriteIntoSource", AsyncWriteIntoSource,
                                 kOneTask, cnrtFuncTypeBlock, nullptr,
                                 out.get()),
               "__bang_write_value writes into the source of a "
               "__memcpy_async before the __sync that completes it \\(the "
               "NRAM2GDRAM copy");
}

TEST_F(EmulatorDeathTest, TaskEndingWithAPendingCopy) {
  DeviceBuffer<float> in(32);
  EXPECT_DEATH(cuvil_emu::launch("ReturnWithPendingCopy", ReturnWithPendingCopy,
                                 kOneTask, cnrtFuncTypeBlock, nullptr,
                                 in.get()),
               "task 0 \\(cluster 0, core 0\\): the task returned with 1 "
               "__memcpy_async not completed by a __sync \\(the first: "
               "GDRAM2NRAM of 128 bytes\\)");
}

TEST_F(EmulatorDeathTest, UnionLaunchesMustFillWholeJobs) {
  EXPECT_DEATH(cuvil_emu::launch("Nothing", Nothing, cnrtDim3_t{6, 1, 1},
                                 cnrtFuncTypeUnion1, nullptr),
               "launch of kernel Nothing: Union1 runs 1 x 4 cores as one job, "
               "so dim.x = 6 must be a multiple of 4 \\(taskDim = 6\\)");
  EXPECT_DEATH(cuvil_emu::launch("Nothing", Nothing, cnrtDim3_t{32, 1, 1},
                                 cnrtFuncTypeUnion8, nullptr),
               "Union8 needs 8 clusters at once; MLU270 has 4");
}

TEST_F(EmulatorDeathTest, BarrierThatSomeCoresNeverReach) {
  EXPECT_DEATH(cuvil_emu::launch("OnlyCoreZeroSyncs", OnlyCoreZeroSyncs,
                                 kOneCluster, cnrtFuncTypeUnion1, nullptr),
               "__sync_cluster: 1 of the 4 cores wait at it and the others "
               "returned from the kernel");
}

TEST_F(EmulatorDeathTest, HostCopiesCheckTheirDirection) {
  std::vector<float> a(64), b(64);
  DeviceBuffer<float> dev(64), other(64);
  EXPECT_DEATH(cnrtMemcpy(a.data(), b.data(), 16, cnrtMemcpyHostToDev),
               "cnrtMemcpy HostToDev: the destination 0x[0-9a-f]+ is not in a "
               "cnrtMalloc buffer");
  EXPECT_DEATH(cnrtMemcpy(dev.get(), other.get(), 16, cnrtMemcpyHostToDev),
               "cnrtMemcpy HostToDev: the source 0x[0-9a-f]+ is in a "
               "cnrtMalloc buffer");
  EXPECT_DEATH(cnrtMemcpy(a.data(), dev.get() + 60, 32, cnrtMemcpyDevToHost),
               "cnrtMemcpy DevToHost reads outside a cnrtMalloc buffer of 256 "
               "bytes: 16 bytes after its end");
}

TEST_F(EmulatorDeathTest, FreeingTwice) {
  void *p = nullptr;
  ASSERT_EQ(cnrtMalloc(&p, 64), cnrtSuccess);
  ASSERT_EQ(cnrtFree(p), cnrtSuccess);
  EXPECT_DEATH(cnrtFree(p), "cnrtFree: 0x[0-9a-f]+ is not the start of a live "
                            "cnrtMalloc buffer");
}

TEST_F(EmulatorDeathTest, DeviceFunctionsOutsideAKernel) {
  alignas(64) float x[32] = {};
  EXPECT_DEATH(__bang_add(x, x, x, 32),
               "cuvil_bang_emu: __bang_add called outside a kernel launched "
               "by cuvil_emu::launch");
}

//===----------------------------------------------------------------------===//
// Semantics, on exact values
//===----------------------------------------------------------------------===//

constexpr int kSlice = 128, kCycle = 64;

// Per task: out = (x + y) * 0.5 + cycle, on its slice.
template <class T>
__mlu_global__ void Arithmetic(T *out, const T *x, const T *y, const T *cycle) {
  CUVIL_NRAM(T, a, kSlice);
  CUVIL_NRAM(T, b, kSlice);
  CUVIL_NRAM(T, c, kCycle);
  const int offset = taskId * kSlice;
  __memcpy(a, x + offset, kSlice * sizeof(T), GDRAM2NRAM);
  __memcpy(b, y + offset, kSlice * sizeof(T), GDRAM2NRAM);
  __memcpy(c, cycle, kCycle * sizeof(T), GDRAM2NRAM);
  __bang_add(a, a, b, kSlice);
  __bang_mul_scalar(a, a, 0.5f, kSlice);
  __bang_cycle_add(a, a, c, kSlice, kCycle);
  __memcpy(out + offset, a, kSlice * sizeof(T), NRAM2GDRAM);
}

template <class T> void checkArithmetic() {
  const int n = 2 * kSlice;
  std::vector<T> x(n), y(n), cycle(kCycle);
  for (int i = 0; i < n; ++i) {
    x[i] = T(float(i % 37) - 10.0f);
    y[i] = T(0.25f * float(i % 5));
  }
  for (int i = 0; i < kCycle; ++i)
    cycle[i] = T(0.125f * float(i));
  DeviceBuffer<T> dx(n), dy(n), dcycle(kCycle), dout(n);
  dx.upload(x);
  dy.upload(y);
  dcycle.upload(cycle);
  cuvil_emu::launch("Arithmetic", Arithmetic<T>, cnrtDim3_t{2, 1, 1},
                    cnrtFuncTypeBlock, nullptr, dout.get(), dx.get(), dy.get(),
                    dcycle.get());
  std::vector<T> out = dout.download();
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(float(out[i]),
              (float(x[i]) + float(y[i])) * 0.5f + float(cycle[i % kCycle]))
        << "element " << i;
}

TEST(EmulatorTest, FloatArithmetic) { checkArithmetic<float>(); }
TEST(EmulatorTest, HalfArithmetic) { checkArithmetic<half>(); }

__mlu_global__ void MoreVectorFunctions(float *out, const float *x,
                                        const float *y) {
  CUVIL_NRAM(float, a, 32);
  CUVIL_NRAM(float, b, 32);
  CUVIL_NRAM(float, r, 3 * 32);
  __memcpy(a, x, 32 * sizeof(float), GDRAM2NRAM);
  __memcpy(b, y, 32 * sizeof(float), GDRAM2NRAM);
  __bang_maxequal(r, a, b, 32);
  __bang_minequal(r + 32, a, b, 32);
  __bang_sub(r + 64, a, b, 32);
  __bang_active_relu(r + 64, r + 64, 32);
  __memcpy(out, r, 3 * 32 * sizeof(float), NRAM2GDRAM);
}

TEST(EmulatorTest, MaxMinSubRelu) {
  std::vector<float> x(32), y(32);
  for (int i = 0; i < 32; ++i) {
    x[i] = float(i) - 16.0f;
    y[i] = float(31 - i) - 16.0f;
  }
  DeviceBuffer<float> dx(32), dy(32), dout(96);
  dx.upload(x);
  dy.upload(y);
  cuvil_emu::launch("MoreVectorFunctions", MoreVectorFunctions, kOneTask,
                    cnrtFuncTypeBlock, nullptr, dout.get(), dx.get(), dy.get());
  std::vector<float> out = dout.download();
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(out[i], std::max(x[i], y[i]));
    EXPECT_EQ(out[32 + i], std::min(x[i], y[i]));
    EXPECT_EQ(out[64 + i], std::max(x[i] - y[i], 0.0f));
  }
}

__mlu_global__ void AddHalves(half *out, const half *x, const half *y) {
  CUVIL_NRAM(half, a, 64);
  CUVIL_NRAM(half, b, 64);
  __memcpy(a, x, 64 * sizeof(half), GDRAM2NRAM);
  __memcpy(b, y, 64 * sizeof(half), GDRAM2NRAM);
  __bang_add(a, a, b, 64);
  __memcpy(out, a, 64 * sizeof(half), NRAM2GDRAM);
}

TEST(EmulatorTest, ConversionsBetweenHalfAndFloat) {
  DeviceBuffer<float> out(64);
  cuvil_emu::launch(
      "Convert",
      [&] {
        CUVIL_NRAM(half, h, 64);
        CUVIL_NRAM(float, f, 64);
        for (int i = 0; i < 64; ++i)
          f[i] = 1.0f + (2 * i + 1) * 0x1p-11f; // halfway between halves
        __bang_float2half_rn(h, f, 64);
        __bang_half2float(f, h, 64);
        __memcpy(out.get(), f, 64 * 4, NRAM2GDRAM);
      },
      kOneTask, cnrtFuncTypeBlock, nullptr);
  std::vector<float> values = out.download();
  for (int i = 0; i < 64; ++i) // to the even one of 1 + i/1024, 1 + (i+1)/1024
    EXPECT_EQ(values[i], 1.0f + ((i + 1) / 2 * 2) * 0x1p-10f) << i;
}

TEST(EmulatorTest, HalfResultsRoundToNearestEven) {
  // 1 + 2^-11 and 1 + 3 * 2^-11 lie halfway between halves.
  const float ulp = std::ldexp(1.0f, -10);
  std::vector<half> x(64), y(64, half(ulp / 2));
  for (int i = 0; i < 64; ++i)
    x[i] = half(i % 2 ? 1.0f + ulp : 1.0f);
  DeviceBuffer<half> dx(64), dy(64), dout(64);
  dx.upload(x);
  dy.upload(y);
  cuvil_emu::launch("AddHalves", AddHalves, kOneTask, cnrtFuncTypeBlock,
                    nullptr, dout.get(), dx.get(), dy.get());
  std::vector<half> out = dout.download();
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(float(out[i]), i % 2 ? 1.0f + 2 * ulp : 1.0f) << i;
}

// Rows of 2 floats, 3 floats apart in GDRAM, land 8 apart in NRAM (async);
// then the first float of each row goes to every other float of `scattered`.
__mlu_global__ void StridedCopies(float *rows, float *scattered,
                                  const float *in) {
  CUVIL_NRAM(float, a, 32);
  __memcpy_async(a, in, 2 * sizeof(float), GDRAM2NRAM, 8 * sizeof(float),
                 3 * sizeof(float), 3);
  __sync_io();
  __memcpy(rows, a, 32 * sizeof(float), NRAM2GDRAM);
  __memcpy(scattered, a, sizeof(float), NRAM2GDRAM, 2 * sizeof(float),
           8 * sizeof(float), 3);
}

TEST(EmulatorTest, StridedCopiesMoveSegnumPlusOneSegments) {
  std::vector<float> in(16);
  for (int i = 0; i < 16; ++i)
    in[i] = float(i + 1);
  DeviceBuffer<float> din(16), rows(32), scattered(8);
  din.upload(in);
  scattered.upload(std::vector<float>(8, -1.0f));
  cuvil_emu::launch("StridedCopies", StridedCopies, kOneTask, cnrtFuncTypeBlock,
                    nullptr, rows.get(), scattered.get(), din.get());
  std::vector<float> r = rows.download(), s = scattered.download();
  for (int row = 0; row < 4; ++row) {
    EXPECT_EQ(r[8 * row], in[3 * row]);
    EXPECT_EQ(r[8 * row + 1], in[3 * row + 1]);
    for (int k = 2; k < 8; ++k) // never written: NRAM's stale-data poison
      EXPECT_TRUE(isPoison(r[8 * row + k])) << row << ", " << k;
  }
  EXPECT_EQ(s, (std::vector<float>{1, -1, 4, -1, 7, -1, 10, -1}));
}

__mlu_global__ void AsyncRoundTrip(float *out, const float *in) {
  CUVIL_NRAM(float, a, 32);
  __bang_write_value(a, 32, 7.0f);
  __memcpy_async(a, in, 32 * sizeof(float), GDRAM2NRAM);
  out[32] = a[0]; // a raw read is not checked, but sees neither 7 nor in[0]
  __sync_io();
  __bang_mul_scalar(a, a, 2.0f, 32);
  __memcpy_async(out, a, 32 * sizeof(float), NRAM2GDRAM);
  __sync();
  out[33] = a[0];
}

TEST(EmulatorTest, AsyncCopiesLandAtTheirSync) {
  std::vector<float> in(32);
  for (int i = 0; i < 32; ++i)
    in[i] = float(i) + 0.5f;
  DeviceBuffer<float> din(32), dout(34);
  din.upload(in);
  cuvil_emu::launch("AsyncRoundTrip", AsyncRoundTrip, kOneTask,
                    cnrtFuncTypeBlock, nullptr, dout.get(), din.get());
  std::vector<float> out = dout.download();
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(out[i], 2 * in[i]);
  EXPECT_TRUE(std::isnan(out[32]));
  EXPECT_EQ(out[33], 2 * in[0]);
}

// Each core puts its 32 values in the cluster's SRAM; after the barrier
// every core reads all 128. Later cores write later, so without a real
// barrier the early ones would read SRAM's poison.
__mlu_global__ void ShareThroughSram(float *out) {
  CUVIL_SRAM(float, shared, 4 * 32);
  CUVIL_NRAM(float, mine, 32);
  CUVIL_NRAM(float, all, 4 * 32);
  std::this_thread::sleep_for(std::chrono::milliseconds(20 * coreId));
  __bang_write_value(mine, 32, float(taskId + 1));
  __memcpy(shared + 32 * coreId, mine, 32 * sizeof(float), NRAM2SRAM);
  __sync_cluster();
  __memcpy(all, shared, 4 * 32 * sizeof(float), SRAM2NRAM);
  __memcpy(out + 128 * taskId, all, 4 * 32 * sizeof(float), NRAM2GDRAM);
}

TEST(EmulatorTest, SyncClusterSynchronizesTheClustersCores) {
  DeviceBuffer<float> dout(8 * 128);
  // Two Union1 jobs, each on its own cluster with its own SRAM.
  cuvil_emu::launch("ShareThroughSram", ShareThroughSram, cnrtDim3_t{8, 1, 1},
                    cnrtFuncTypeUnion1, nullptr, dout.get());
  std::vector<float> out = dout.download();
  for (int task = 0; task < 8; ++task)
    for (int core = 0; core < 4; ++core)
      for (int i = 0; i < 32; ++i)
        ASSERT_EQ(out[128 * task + 32 * core + i],
                  float(task / 4 * 4 + core + 1))
            << "task " << task << " core " << core;
}

__mlu_global__ void SumAfterSyncAll(float *slots, float *sums) {
  std::this_thread::sleep_for(std::chrono::milliseconds(5 * taskId));
  slots[taskId] = float(taskId + 1);
  __sync_all();
  float sum = 0;
  for (int i = 0; i < taskDim; ++i)
    sum += slots[i];
  sums[taskId] = sum;
}

TEST(EmulatorTest, SyncAllSynchronizesTheUnionJob) {
  DeviceBuffer<float> slots(8), sums(8);
  cuvil_emu::launch("SumAfterSyncAll", SumAfterSyncAll, cnrtDim3_t{8, 1, 1},
                    cnrtFuncTypeUnion2, nullptr, slots.get(), sums.get());
  EXPECT_EQ(sums.download(), std::vector<float>(8, 36.0f));
}

__mlu_global__ void RecordBuiltins(int *out) {
  const int values[] = {taskId,    taskDim,    taskIdX,  taskIdY,
                        taskIdZ,   taskDimX,   taskDimY, taskDimZ,
                        clusterId, clusterDim, coreId,   coreDim};
  for (int i = 0; i < 12; ++i)
    out[12 * taskId + i] = values[i];
}

// Each task's built-ins, against `expect(task)` for the cluster and core
// fields {clusterId, clusterDim, coreId, coreDim}.
template <class Expect>
void checkBuiltins(cnrtDim3_t dim, cnrtFunctionType_t type, Expect expect) {
  const int tasks = int(dim.x * dim.y * dim.z);
  DeviceBuffer<int> dout(size_t(12 * tasks));
  cuvil_emu::launch("RecordBuiltins", RecordBuiltins, dim, type, nullptr,
                    dout.get());
  std::vector<int> out = dout.download();
  const int x = int(dim.x), y = int(dim.y), z = int(dim.z);
  for (int t = 0; t < tasks; ++t) {
    std::vector<int> want = {t, tasks, t % x, t / x % y, t / (x * y), x, y, z};
    std::vector<int> cluster = expect(t);
    want.insert(want.end(), cluster.begin(), cluster.end());
    EXPECT_EQ(std::vector<int>(out.begin() + 12 * t, out.begin() + 12 * t + 12),
              want)
        << "task " << t;
  }
}

TEST(EmulatorTest, BuiltinsOfBlockTasks) {
  // 20 tasks: two waves of MLU270's 16 cores.
  checkBuiltins(cnrtDim3_t{5, 2, 2}, cnrtFuncTypeBlock, [](int) {
    return std::vector<int>{0, 0, 0, 1};
  });
}

TEST(EmulatorTest, BuiltinsOfUnion1Tasks) {
  // Six jobs of one cluster: two waves of MLU270's 4 clusters.
  checkBuiltins(cnrtDim3_t{4, 2, 3}, cnrtFuncTypeUnion1, [](int t) {
    return std::vector<int>{0, 1, t % 4, 4};
  });
}

TEST(EmulatorTest, BuiltinsOfUnion2Tasks) {
  checkBuiltins(cnrtDim3_t{8, 2, 1}, cnrtFuncTypeUnion2, [](int t) {
    return std::vector<int>{t % 8 / 4, 2, t % 4, 4};
  });
}

__mlu_global__ void RedeclareInALoop(long long *out) {
  for (int i = 0; i < 3; ++i) {
    CUVIL_NRAM(float, a, 32);
    out[i] = static_cast<long long>(reinterpret_cast<uintptr_t>(a));
  }
}

TEST(EmulatorTest, ADeclarationReachedAgainNamesTheSameBuffer) {
  DeviceBuffer<long long> dout(3);
  cuvil_emu::launch("RedeclareInALoop", RedeclareInALoop, kOneTask,
                    cnrtFuncTypeBlock, nullptr, dout.get());
  std::vector<long long> out = dout.download();
  EXPECT_EQ(out[1], out[0]);
  EXPECT_EQ(out[2], out[0]);
  EXPECT_EQ(out[0] % 64, 0);
}

TEST(CnrtTest, RuntimeCalls) {
  EXPECT_EQ(cnrtSetDevice(0), cnrtSuccess);
  EXPECT_EQ(cnrtSetDevice(1), cnrtErrorDeviceInvalid);
  EXPECT_STREQ(cnrtGetErrorStr(cnrtErrorArgsInvalid),
               "cnrtErrorArgsInvalid: invalid argument");
  void *p = nullptr;
  EXPECT_EQ(cnrtMalloc(&p, 0), cnrtErrorArgsInvalid);

  cnrtQueue_t queue = nullptr;
  ASSERT_EQ(cnrtQueueCreate(&queue), cnrtSuccess);
  DeviceBuffer<float> a(4), b(4), fresh(1);
  std::vector<float> in = {1, 2, 3, 4}, out(4);
  EXPECT_EQ(cnrtMemcpy(a.get(), in.data(), 16, cnrtMemcpyNoDirection),
            cnrtSuccess);
  EXPECT_EQ(cnrtMemcpy(b.get(), a.get(), 16, cnrtMemcpyDevToDev), cnrtSuccess);
  EXPECT_EQ(cnrtMemcpy(out.data(), b.get(), 16, cnrtMemcpyNoDirection),
            cnrtSuccess);
  EXPECT_EQ(out, in);
  EXPECT_EQ(cnrtMemcpy(out.data(), b.get(), 16, cnrtMemTransDir_t(7)),
            cnrtErrorMemcpyDirectionInvalid);
  EXPECT_TRUE(isPoison(fresh.download()[0])); // cnrtMalloc does not zero
  cuvil_emu::launch("Nothing", Nothing, kOneTask, cnrtFuncTypeBlock, queue);
  EXPECT_EQ(cnrtQueueSync(queue), cnrtSuccess);
  EXPECT_EQ(cnrtQueueDestroy(queue), cnrtSuccess);
}

} // namespace
