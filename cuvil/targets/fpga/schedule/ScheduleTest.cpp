// The scheduler on small datapaths whose optimal schedules are known by
// hand: resource-bound and latency-bound list schedules, chaining under the
// clock, and modulo schedules at their resource and recurrence bounds.
#include "cuvil/targets/fpga/schedule/Schedule.h"

#include "gtest/gtest.h"

namespace cuvil::fpga {
namespace {

constexpr int kDsp = 0, kAdder = 1;

/// A budget of `dsps` multipliers and `adders` adders.
Graph datapath(int dsps, int adders) {
  Graph g;
  g.resources = {{"dsp", dsps}, {"adder", adders}};
  return g;
}

int mul(Graph &g, const std::string &name, int latency = 2) {
  g.operations.push_back({name, kDsp, latency, 1, 0.5});
  return static_cast<int>(g.operations.size()) - 1;
}

int add(Graph &g, const std::string &name, int latency = 1, double delayNs = 0.5) {
  g.operations.push_back({name, kAdder, latency, 1, delayNs});
  return static_cast<int>(g.operations.size()) - 1;
}

void edge(Graph &g, int from, int to, int distance = 0) {
  g.dependences.push_back({from, to, distance});
}

TEST(ListScheduleTest, OneMultiplierTakesTheProductsInTurn) {
  Graph g = datapath(1, 1);
  for (int i = 0; i < 4; ++i)
    mul(g, "m" + std::to_string(i), 1);
  absl::StatusOr<Schedule> s = listSchedule(g, 4.0);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->start, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(s->length, 4);
  EXPECT_EQ(s->unitsUsed, (std::vector<int>{1, 0}));
}

// (a * b) + (c * d): two multipliers finish together at cycle 2; one
// multiplier delays the second product a cycle.
TEST(ListScheduleTest, MultiplyAddIsLatencyOrResourceBound) {
  for (int dsps : {2, 1}) {
    Graph g = datapath(dsps, 1);
    int m0 = mul(g, "ab"), m1 = mul(g, "cd"), s = add(g, "sum");
    edge(g, m0, s);
    edge(g, m1, s);
    absl::StatusOr<Schedule> r = listSchedule(g, 4.0);
    ASSERT_TRUE(r.ok()) << r.status();
    if (dsps == 2) {
      EXPECT_EQ(r->start, (std::vector<int>{0, 0, 2}));
      EXPECT_EQ(r->length, 3);
    } else {
      EXPECT_EQ(r->start, (std::vector<int>{0, 1, 3}));
      EXPECT_EQ(r->length, 4);
    }
  }
}

// The critical path goes first: with one multiplier, the product that
// feeds a long chain of adds starts before the one that ends the datapath.
TEST(ListScheduleTest, TheCriticalPathHasPriority) {
  Graph g = datapath(1, 4);
  int lone = mul(g, "lone");
  int head = mul(g, "head");
  int a = add(g, "a"), b = add(g, "b"), c = add(g, "c");
  edge(g, head, a);
  edge(g, a, b);
  edge(g, b, c);
  absl::StatusOr<Schedule> s = listSchedule(g, 4.0);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->start[head], 0);
  EXPECT_EQ(s->start[lone], 1);
  EXPECT_EQ(s->length, 5); // head 0-1, adds at 2, 3, 4
}

// Three chained LUT adders of 1.5 ns: two fit a 4 ns cycle (1 ns slack),
// all three a 5 ns one (0.5 ns slack).
TEST(ListScheduleTest, CombinationalOperationsChainWithinTheClock) {
  for (double clock : {4.0, 5.0}) {
    Graph g = datapath(1, 3);
    int a = add(g, "a", 0, 1.5), b = add(g, "b", 0, 1.5), c = add(g, "c", 0, 1.5);
    edge(g, a, b);
    edge(g, b, c);
    absl::StatusOr<Schedule> s = listSchedule(g, clock);
    ASSERT_TRUE(s.ok()) << s.status();
    if (clock == 4.0) {
      EXPECT_EQ(s->start, (std::vector<int>{0, 0, 1}));
      EXPECT_DOUBLE_EQ(s->slackNs, 1.0);
      EXPECT_EQ(s->length, 2);
    } else {
      EXPECT_EQ(s->start, (std::vector<int>{0, 0, 0}));
      EXPECT_DOUBLE_EQ(s->slackNs, 0.5);
      EXPECT_EQ(s->length, 1);
    }
  }
}

TEST(ListScheduleTest, ErrorsNameTheOperation) {
  Graph slow = datapath(1, 1);
  add(slow, "wide_adder", 0, 6.0);
  absl::StatusOr<Schedule> s = listSchedule(slow, 4.0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "operation 'wide_adder' takes 6 ns, more than the 4 ns clock "
            "period; pipeline it (a latency of 1 or more) or lower the clock");

  Graph loop = datapath(1, 1);
  int a = add(loop, "a"), b = add(loop, "b");
  edge(loop, a, b);
  edge(loop, b, a);
  s = listSchedule(loop, 4.0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("depends on itself within one iteration"),
            std::string::npos)
      << s.status();

  Graph bad = datapath(1, 1);
  bad.operations.push_back({"orphan", 7, 1, 1, 0});
  s = listSchedule(bad, 4.0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), "operation 'orphan' names no resource class");
}

// A 16 -> 64 dense layer at reuse factor 1 (the jet tagger's first): its
// 1024 products each on a multiplier in cycle 0, and each output's 16
// products summed by a tree of 15 adders whose 4 levels of 1 ns chain into
// one 4 ns cycle: results in cycle 2, no slack left.
TEST(ListScheduleTest, ADenseLayerAtReuseOne) {
  const int nIn = 16, nOut = 64;
  Graph g = datapath(nIn * nOut, nOut * (nIn - 1));
  for (int o = 0; o < nOut; ++o) {
    std::vector<int> level;
    for (int i = 0; i < nIn; ++i)
      level.push_back(mul(g, "p" + std::to_string(o) + "_" + std::to_string(i)));
    while (level.size() > 1) {
      std::vector<int> next;
      for (size_t k = 0; k + 1 < level.size(); k += 2) {
        int s = add(g, "s", 0, 1.0);
        edge(g, level[k], s);
        edge(g, level[k + 1], s);
        next.push_back(s);
      }
      level = next;
    }
  }
  absl::StatusOr<Schedule> s = listSchedule(g, 4.0);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->length, 3);
  EXPECT_DOUBLE_EQ(s->slackNs, 0.0);
  EXPECT_EQ(s->unitsUsed, (std::vector<int>{nIn * nOut, nOut * (nIn - 1)}));
  for (size_t op = 0; op < g.operations.size(); ++op)
    EXPECT_EQ(s->start[op], g.operations[op].resource == kDsp ? 0 : 2);
}

// A dot product's loop body: multiply (3 cycles) and accumulate (1 cycle,
// carried to the next iteration): one iteration per cycle.
TEST(ModuloScheduleTest, AnAccumulatorPipelinesAtOne) {
  Graph g = datapath(1, 1);
  int m = mul(g, "mul", 3), acc = add(g, "acc", 1);
  edge(g, m, acc);
  edge(g, acc, acc, 1);
  EXPECT_EQ(resourceMII(g), 1);
  EXPECT_EQ(recurrenceMII(g), 1);
  absl::StatusOr<Schedule> s = moduloSchedule(g, 4.0, 16);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ii, 1);
  EXPECT_EQ(s->start, (std::vector<int>{0, 3}));
  EXPECT_EQ(s->length, 4);
}

// The recurrence bound: a 2-cycle accumulator (a floating-point adder)
// allows one iteration every 2 cycles; a cycle of 3 cycles' latency over
// 2 iterations, one every 2 (ceil(3 / 2)); a cycle of 3 over 1, every 3.
TEST(ModuloScheduleTest, RecurrencesBoundTheInterval) {
  Graph slowAcc = datapath(1, 1);
  int acc = add(slowAcc, "acc", 2);
  edge(slowAcc, acc, acc, 1);
  EXPECT_EQ(recurrenceMII(slowAcc), 2);

  for (int distance : {1, 2}) {
    Graph g = datapath(1, 1);
    int a = mul(g, "a", 2), b = add(g, "b", 1);
    edge(g, a, b);
    edge(g, b, a, distance);
    EXPECT_EQ(recurrenceMII(g), distance == 1 ? 3 : 2);
    absl::StatusOr<Schedule> s = moduloSchedule(g, 4.0, 16);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->ii, distance == 1 ? 3 : 2);
    // b's result feeds a of `distance` iterations later in time.
    EXPECT_LE(s->start[b] + 1, s->start[a] + s->ii * distance);
  }
}

// Four products per iteration on two multipliers: one iteration every 2
// cycles, each multiplier busy in both slots.
TEST(ModuloScheduleTest, ResourcesBoundTheInterval) {
  Graph g = datapath(2, 2);
  int s0 = add(g, "s0"), s1 = add(g, "s1");
  for (int i = 0; i < 4; ++i)
    edge(g, mul(g, "m" + std::to_string(i)), i < 2 ? s0 : s1);
  EXPECT_EQ(resourceMII(g), 2);
  absl::StatusOr<Schedule> s = moduloSchedule(g, 4.0, 16);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ii, 2);
  EXPECT_EQ(s->unitsUsed, (std::vector<int>{2, 1}));
  // No slot holds more products than multipliers.
  int perSlot[2] = {0, 0};
  for (int op = 2; op < 6; ++op)
    ++perSlot[s->start[op] % 2];
  EXPECT_EQ(perSlot[0], 2);
  EXPECT_EQ(perSlot[1], 2);
}

// A sum of four products, then an accumulator (a register: its recurrence
// is one cycle). The adder chain (3 x 2 ns) does not fit one 5 ns cycle, so
// the last adder starts a cycle later, after a register: II stays 1 (an
// II-wide window alone would have found no slot and raised it).
TEST(ModuloScheduleTest, AChainTooLongForOneCycleBreaksAtARegister) {
  Graph g = datapath(4, 4);
  int m[4];
  for (int i = 0; i < 4; ++i)
    m[i] = mul(g, "m" + std::to_string(i), 2);
  int a0 = add(g, "a0", 0, 2.0), a1 = add(g, "a1", 0, 2.0);
  int a2 = add(g, "a2", 0, 2.0), acc = add(g, "acc", 1, 2.0);
  edge(g, m[0], a0);
  edge(g, m[1], a0);
  edge(g, m[2], a1);
  edge(g, m[3], a1);
  edge(g, a0, a2);
  edge(g, a1, a2);
  edge(g, a2, acc);
  edge(g, acc, acc, 1);
  absl::StatusOr<Schedule> s = moduloSchedule(g, 5.0, 16);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ii, 1);
  EXPECT_EQ(s->start[a0], 2);
  EXPECT_EQ(s->start[a2], 2);  // a0 then a2: 4 ns
  EXPECT_EQ(s->start[acc], 3); // 6 ns would not fit: the next cycle
  EXPECT_GE(s->slackNs, 0);
}

TEST(ModuloScheduleTest, AnIntervalBeyondTheLimitIsAnError) {
  Graph g = datapath(1, 1);
  for (int i = 0; i < 8; ++i)
    mul(g, "m" + std::to_string(i));
  absl::StatusOr<Schedule> s = moduloSchedule(g, 4.0, 4);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.status().message(),
            "no schedule with an initiation interval of at most 4 (the "
            "resources bound it to 8 or more, the loop-carried dependences "
            "to 1 or more)");
}

} // namespace
} // namespace cuvil::fpga
