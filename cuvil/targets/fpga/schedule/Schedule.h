//===- Schedule.h - resource-constrained scheduling of a datapath -*- C++ -*-===//
//
// The FPGA target's scheduler core: operations of one layer's datapath (or
// one iteration of a pipelined loop) placed in clock cycles under a budget
// of hardware units, the way HLS tools do it.
//
//  - listSchedule: operations by priority (the longest latency path to the
//    end, so the critical path goes first), each in the first cycle where
//    its operands are ready and a unit of its class is free. Operations of
//    latency 0 (adders and muxes built from LUTs) chain: they start in the
//    cycle their operands arrive if the combinational path through them
//    still fits the clock period, and the schedule reports the slack left.
//  - moduloSchedule: a loop body started every II cycles: II starts at
//    max(ResMII, RecMII), the resource bound (uses per class over its
//    units) and the recurrence bound (the worst latency / iteration-distance
//    ratio over the loop-carried cycles), and grows until every operation,
//    in priority order, has a slot in the modulo reservation table that
//    honours its dependences (Rau's iterative modulo scheduling without
//    eviction: a failed placement raises II instead of displacing others).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_SCHEDULE_SCHEDULE_H
#define CUVIL_TARGETS_FPGA_SCHEDULE_SCHEDULE_H

#include "absl/status/statusor.h"

#include <string>
#include <vector>

namespace cuvil::fpga {

/// A kind of hardware unit and how many the budget allows (DSP
/// multipliers, LUT multipliers, adders, the ports of a memory).
struct ResourceClass {
  std::string name;
  int units = 1;
};

struct Operation {
  std::string name;
  /// Index into Graph::resources; -1 for operations that take no unit.
  int resource = -1;
  /// Cycles from its start until its result is registered; 0 for a
  /// combinational operation, whose result is ready in its own cycle.
  int latency = 0;
  /// Cycles its unit stays busy (1: fully pipelined).
  int occupancy = 1;
  /// Combinational delay in ns (of a latency-0 operation, or the logic in
  /// front of a registered one's first stage).
  double delayNs = 0;
};

/// `to` reads the result of `from` computed `distance` iterations earlier
/// (0: in the same iteration; > 0: a loop-carried dependence).
struct Dependence {
  int from = 0, to = 0;
  int distance = 0;
};

struct Graph {
  std::vector<ResourceClass> resources;
  std::vector<Operation> operations;
  std::vector<Dependence> dependences;
};

struct Schedule {
  /// The cycle each operation starts in (of iteration 0).
  std::vector<int> start;
  /// Cycles until every result of one iteration is ready (its latency).
  int length = 0;
  /// The initiation interval of a modulo schedule; 0 for a list schedule.
  int ii = 0;
  /// The clock period minus the longest combinational path in a cycle.
  double slackNs = 0;
  /// Most units of each class busy in one cycle (in one II window for a
  /// modulo schedule): what the datapath needs.
  std::vector<int> unitsUsed;
};

/// The resource bound on II: max over classes of ceil(busy cycles / units).
int resourceMII(const Graph &graph);
/// The recurrence bound on II: the smallest II under which no loop-carried
/// cycle needs more cycles than its iterations give (1 without cycles).
int recurrenceMII(const Graph &graph);

/// Errors (InvalidArgument, naming the operation): a bad index or count, a
/// cycle of same-iteration dependences, an operation slower than the clock.
absl::StatusOr<Schedule> listSchedule(const Graph &graph, double clockNs);

/// As listSchedule, for a loop body started every II cycles, II at most
/// `maxIi` (ResourceExhausted beyond).
absl::StatusOr<Schedule> moduloSchedule(const Graph &graph, double clockNs,
                                        int maxIi);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_SCHEDULE_SCHEDULE_H
