//===- Schedule.cpp - list and modulo scheduling --------------------------===//

#include "cuvil/targets/fpga/schedule/Schedule.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <algorithm>
#include <cstdint>

namespace cuvil::fpga {

namespace {

absl::Status checkGraph(const Graph &g, double clockNs) {
  if (!(clockNs > 0))
    return absl::InvalidArgumentError("the clock period must be positive");
  for (const ResourceClass &r : g.resources)
    if (r.units < 1)
      return absl::InvalidArgumentError(
          absl::StrCat("resource class '", r.name, "' has no units"));
  for (const Operation &op : g.operations) {
    if (op.resource < -1 || op.resource >= static_cast<int>(g.resources.size()))
      return absl::InvalidArgumentError(
          absl::StrCat("operation '", op.name, "' names no resource class"));
    if (op.latency < 0 || op.occupancy < 1)
      return absl::InvalidArgumentError(absl::StrCat(
          "operation '", op.name, "' has a negative latency or no occupancy"));
    if (op.delayNs > clockNs)
      return absl::InvalidArgumentError(absl::StrFormat(
          "operation '%s' takes %.3g ns, more than the %.3g ns clock period; "
          "pipeline it (a latency of 1 or more) or lower the clock",
          op.name, op.delayNs, clockNs));
  }
  int n = static_cast<int>(g.operations.size());
  for (const Dependence &d : g.dependences)
    if (d.from < 0 || d.from >= n || d.to < 0 || d.to >= n || d.distance < 0)
      return absl::InvalidArgumentError("a dependence names no operation");
  return absl::OkStatus();
}

/// Each operation's dependences in and out (pointers into g.dependences),
/// so that a layer's thousands of operations schedule in linear passes.
struct Edges {
  std::vector<std::vector<const Dependence *>> in, out;
  explicit Edges(const Graph &g)
      : in(g.operations.size()), out(g.operations.size()) {
    for (const Dependence &d : g.dependences) {
      in[d.to].push_back(&d);
      out[d.from].push_back(&d);
    }
  }
};

/// Same-iteration dependences in a topological order, or an error naming an
/// operation on a cycle.
absl::StatusOr<std::vector<int>> topologicalOrder(const Graph &g,
                                                  const Edges &edges) {
  int n = static_cast<int>(g.operations.size());
  std::vector<int> indegree(n, 0), order;
  for (const Dependence &d : g.dependences)
    if (d.distance == 0)
      ++indegree[d.to];
  for (int i = 0; i < n; ++i)
    if (indegree[i] == 0)
      order.push_back(i);
  for (size_t k = 0; k < order.size(); ++k)
    for (const Dependence *d : edges.out[order[k]])
      if (d->distance == 0 && --indegree[d->to] == 0)
        order.push_back(d->to);
  if (static_cast<int>(order.size()) != n)
    for (int i = 0; i < n; ++i)
      if (indegree[i] > 0)
        return absl::InvalidArgumentError(absl::StrCat(
            "operation '", g.operations[i].name,
            "' depends on itself within one iteration; a loop-carried "
            "dependence needs a distance of 1 or more"));
  return order;
}

/// Cycles from each operation's start to the end of the longest
/// same-iteration path through it: the list's priority.
std::vector<int> heights(const Graph &g, const Edges &edges,
                         const std::vector<int> &order) {
  std::vector<int> height(g.operations.size(), 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int op = *it, below = 0;
    for (const Dependence *d : edges.out[op])
      if (d->distance == 0)
        below = std::max(below, height[d->to]);
    height[op] = g.operations[op].latency + below;
  }
  return height;
}

/// The checked graph's operations' priorities (heights).
absl::StatusOr<std::vector<int>> priorities(const Graph &g, const Edges &edges,
                                            double clockNs) {
  if (absl::Status s = checkGraph(g, clockNs); !s.ok())
    return s;
  absl::StatusOr<std::vector<int>> order = topologicalOrder(g, edges);
  if (!order.ok())
    return order.status();
  return heights(g, edges, *order);
}

/// The cycles an iteration takes: every result ready.
int iterationLength(const Graph &g, const std::vector<int> &start) {
  int length = 0;
  for (size_t i = 0; i < start.size(); ++i)
    length = std::max(length, start[i] + std::max(g.operations[i].latency, 1));
  return length;
}

/// Units busy per class and cycle; cycles taken modulo `ii` when ii > 0.
class ReservationTable {
public:
  ReservationTable(const Graph &g, int ii)
      : g_(g), ii_(ii), used_(g.resources.size()) {}

  bool fits(const Operation &op, int t) const {
    if (op.resource < 0)
      return true;
    const std::vector<int> &row = used_[op.resource];
    for (int k = 0; k < op.occupancy; ++k) {
      size_t slot = this->slot(t + k);
      if (slot < row.size() && row[slot] >= g_.resources[op.resource].units)
        return false;
    }
    return true;
  }

  void take(const Operation &op, int t) {
    if (op.resource < 0)
      return;
    std::vector<int> &row = used_[op.resource];
    for (int k = 0; k < op.occupancy; ++k) {
      size_t slot = this->slot(t + k);
      if (row.size() <= slot)
        row.resize(slot + 1, 0);
      ++row[slot];
    }
  }

  std::vector<int> peak() const {
    std::vector<int> peak;
    for (const std::vector<int> &row : used_)
      peak.push_back(row.empty() ? 0 : *std::max_element(row.begin(), row.end()));
    return peak;
  }

private:
  size_t slot(int t) const { return static_cast<size_t>(ii_ > 0 ? t % ii_ : t); }

  const Graph &g_;
  int ii_;
  std::vector<std::vector<int>> used_;
};

/// Placement of operations one at a time; `ii` 0 for a list schedule.
class Placer {
public:
  Placer(const Graph &g, const Edges &edges, double clockNs, int ii)
      : g_(g), edges_(edges), clockNs_(clockNs), ii_(ii), table_(g, ii),
        start_(g.operations.size(), -1), arrival_(g.operations.size(), 0) {}

  bool placed(int op) const { return start_[op] >= 0; }

  /// The earliest cycle the scheduled producers allow.
  int earliest(int op) const {
    int t = 0;
    for (const Dependence *d : edges_.in[op])
      if (placed(d->from))
        t = std::max(t, start_[d->from] + g_.operations[d->from].latency -
                            ii_ * d->distance);
    return t;
  }

  /// The latest cycle the scheduled consumers allow (loop-carried ones).
  int latest(int op) const {
    int t = INT32_MAX;
    for (const Dependence *d : edges_.out[op])
      if (placed(d->to))
        t = std::min(t, start_[d->to] + ii_ * d->distance -
                            g_.operations[op].latency);
    return t;
  }

  /// Where op's combinational path would end if it started in cycle t:
  /// after the chained results of this cycle (latency-0 producers started
  /// in it), or after registers.
  double arrivalAt(int op, int t) const {
    double in = 0;
    for (const Dependence *d : edges_.in[op])
      if (d->distance == 0 && placed(d->from) &&
          g_.operations[d->from].latency == 0 && start_[d->from] == t)
        in = std::max(in, arrival_[d->from]);
    return in + g_.operations[op].delayNs;
  }

  bool tryAt(int op, int t) {
    const Operation &o = g_.operations[op];
    double arrival = arrivalAt(op, t);
    if (arrival > clockNs_ || !table_.fits(o, t))
      return false;
    table_.take(o, t);
    start_[op] = t;
    arrival_[op] = arrival;
    return true;
  }

  Schedule result() const {
    Schedule s;
    s.start = start_;
    s.length = iterationLength(g_, start_);
    s.ii = ii_;
    double worst = 0;
    for (double a : arrival_)
      worst = std::max(worst, a);
    s.slackNs = clockNs_ - worst;
    s.unitsUsed = table_.peak();
    return s;
  }

private:
  const Graph &g_;
  const Edges &edges_;
  double clockNs_;
  int ii_;
  ReservationTable table_;
  std::vector<int> start_;
  std::vector<double> arrival_;
};

/// Operations whose same-iteration producers are all placed, highest first.
std::vector<int> readyByPriority(const Graph &g, const Edges &edges,
                                 const Placer &placer,
                                 const std::vector<int> &height) {
  std::vector<int> ready;
  for (int op = 0; op < static_cast<int>(g.operations.size()); ++op) {
    if (placer.placed(op))
      continue;
    bool inputs = true;
    for (const Dependence *d : edges.in[op])
      if (d->distance == 0 && !placer.placed(d->from))
        inputs = false;
    if (inputs)
      ready.push_back(op);
  }
  std::stable_sort(ready.begin(), ready.end(),
                   [&](int a, int b) { return height[a] > height[b]; });
  return ready;
}

/// Whether some loop-carried cycle needs more than `ii` cycles per
/// iteration: a positive cycle under weights latency - ii * distance
/// (Bellman-Ford, longest paths).
bool recurrenceViolated(const Graph &g, int ii) {
  size_t n = g.operations.size();
  std::vector<int64_t> longest(n, 0);
  for (size_t round = 0; round <= n; ++round) {
    bool changed = false;
    for (const Dependence &d : g.dependences) {
      int64_t w = g.operations[d.from].latency - int64_t{ii} * d.distance;
      if (longest[d.from] + w > longest[d.to]) {
        longest[d.to] = longest[d.from] + w;
        changed = true;
      }
    }
    if (!changed)
      return false;
  }
  return true;
}

} // namespace

int resourceMII(const Graph &graph) {
  std::vector<int> busy(graph.resources.size(), 0);
  for (const Operation &op : graph.operations)
    if (op.resource >= 0)
      busy[op.resource] += op.occupancy;
  int mii = 1;
  for (size_t r = 0; r < busy.size(); ++r)
    mii = std::max(mii, (busy[r] + graph.resources[r].units - 1) /
                            graph.resources[r].units);
  return mii;
}

int recurrenceMII(const Graph &graph) {
  int hi = 1;
  for (const Operation &op : graph.operations)
    hi += op.latency;
  if (recurrenceViolated(graph, hi))
    return hi; // only a same-iteration cycle does this; checked elsewhere
  int lo = 1;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (recurrenceViolated(graph, mid))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

absl::StatusOr<Schedule> listSchedule(const Graph &graph, double clockNs) {
  Edges edges(graph);
  absl::StatusOr<std::vector<int>> height = priorities(graph, edges, clockNs);
  if (!height.ok())
    return height.status();
  Placer placer(graph, edges, clockNs, /*ii=*/0);
  size_t left = graph.operations.size();
  for (int t = 0; left > 0; ++t) {
    // Ops placed in this cycle may let their chained consumers in too.
    for (bool progress = true; progress;) {
      progress = false;
      for (int op : readyByPriority(graph, edges, placer, *height))
        if (placer.earliest(op) <= t && placer.tryAt(op, t)) {
          --left;
          progress = true;
        }
    }
  }
  return placer.result();
}

absl::StatusOr<Schedule> moduloSchedule(const Graph &graph, double clockNs,
                                        int maxIi) {
  Edges edges(graph);
  absl::StatusOr<std::vector<int>> height = priorities(graph, edges, clockNs);
  if (!height.ok())
    return height.status();
  int resMii = resourceMII(graph), recMii = recurrenceMII(graph);
  for (int ii = std::max(resMii, recMii); ii <= maxIi; ++ii) {
    Placer placer(graph, edges, clockNs, ii);
    bool failed = false;
    for (size_t k = 0; k < graph.operations.size() && !failed; ++k) {
      int op = readyByPriority(graph, edges, placer, *height).front();
      // Rau's window is II cycles wide (the reservation table repeats
      // after them); one cycle more lets an operation that cannot chain
      // onto its operands' cycle start after a register instead.
      int first = placer.earliest(op);
      int last = std::min(first + ii, placer.latest(op));
      failed = true;
      for (int t = first; t <= last && failed; ++t)
        failed = !placer.tryAt(op, t);
    }
    if (!failed)
      return placer.result();
  }
  return absl::ResourceExhaustedError(absl::StrFormat(
      "no schedule with an initiation interval of at most %d (the resources "
      "bound it to %d or more, the loop-carried dependences to %d or more)",
      maxIi, resMii, recMii));
}

} // namespace cuvil::fpga
