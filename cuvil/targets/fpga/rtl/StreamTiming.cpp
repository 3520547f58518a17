//===- StreamTiming.cpp - a design's handshakes, cycle by cycle -----------===//

#include "cuvil/targets/fpga/rtl/StreamTiming.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include <algorithm>
#include <memory>
#include <tuple>

namespace cuvil::fpga {

namespace {

/// One module's control. Each cycle: its input's readiness from its
/// output's (combinational, as the RTL's), then the handshakes' effect.
class Stage {
public:
  virtual ~Stage() = default;
  virtual bool outValid() const = 0;
  virtual bool inReady(bool outReady) const = 0;
  virtual void tick(bool inFire, bool outFire, bool outReady) = 0;
};

/// A pipeline of `depth` registers frozen while its output is not taken:
/// a dense layer at reuse factor 1, a softmax, a ReLU, a max tree.
class Pipe : public Stage {
public:
  explicit Pipe(int depth) : flags_(std::max(depth, 1), false) {}
  bool outValid() const override { return flags_.back(); }
  bool inReady(bool outReady) const override {
    return !outValid() || outReady;
  }
  void tick(bool inFire, bool, bool outReady) override {
    if (!inReady(outReady))
      return;
    flags_.insert(flags_.begin(), inFire);
    flags_.pop_back();
  }

private:
  std::vector<bool> flags_;
};

/// A folded dense layer: a sample takes `reuse` iterations, each carried
/// `accStart` cycles to the accumulator, whose last one sets the output.
class Folded : public Stage {
public:
  Folded(int64_t reuse, int accStart)
      : reuse_(reuse), valid_(accStart, false), last_(accStart, false) {}
  bool outValid() const override { return outValid_; }
  bool inReady(bool outReady) const override {
    return (!outValid_ || outReady) && left_ == 0;
  }
  void tick(bool inFire, bool, bool outReady) override {
    if (outValid_ && !outReady)
      return;
    bool busy = left_ != 0;
    bool issue = inFire || busy, last = busy && left_ == 1;
    if (!valid_.empty()) {
      valid_.insert(valid_.begin(), issue);
      last_.insert(last_.begin(), last);
      issue = valid_.back();
      last = last_.back();
      valid_.pop_back();
      last_.pop_back();
    }
    outValid_ = issue && last;
    left_ = inFire ? reuse_ - 1 : busy ? left_ - 1 : left_;
  }

private:
  int64_t reuse_, left_ = 0;
  std::vector<bool> valid_, last_;
  bool outValid_ = false;
};

/// A window generator (VerilogWindow.cpp): one step of the sweep a cycle
/// while no window waits for the core, taking an input pixel at the steps
/// inside the image.
class Generator : public Stage {
public:
  explicit Generator(const Window &w) : sweep_(w) {}
  bool outValid() const override { return pending_; }
  bool inReady(bool outReady) const override {
    return (!pending_ || outReady) && sweep_.real(r_, c_);
  }
  void tick(bool inFire, bool outFire, bool) override {
    bool free = !pending_ || outFire;
    bool step = free && (!sweep_.real(r_, c_) || inFire);
    if (!step) {
      if (outFire)
        pending_ = false;
      return;
    }
    pending_ = sweep_.window(r_, c_);
    if (++c_ == sweep_.cols) {
      c_ = 0;
      r_ = r_ + 1 == sweep_.rows ? 0 : r_ + 1;
    }
  }

private:
  Sweep sweep_;
  int64_t r_ = 0, c_ = 0;
  bool pending_ = false;
};

/// A gather: a sample's pixels into one vector, held until taken.
class Gather : public Stage {
public:
  explicit Gather(int64_t pixels) : pixels_(pixels) {}
  bool outValid() const override { return full_; }
  bool inReady(bool outReady) const override { return !full_ || outReady; }
  void tick(bool inFire, bool outFire, bool) override {
    if (outFire)
      full_ = false;
    if (inFire && ++count_ == pixels_) {
      count_ = 0;
      full_ = true;
    }
  }

private:
  int64_t pixels_, count_ = 0;
  bool full_ = false;
};

std::unique_ptr<Stage> denseStage(const RtlLayer &layer) {
  if (layer.plan->reuse == 1)
    return std::make_unique<Pipe>(layer.coreLatency);
  return std::make_unique<Folded>(layer.plan->reuse, layer.coreLatency - 1);
}

struct Chain {
  std::vector<std::unique_ptr<Stage>> stages;
  /// Transfers a sample makes on the chain's input and output.
  int64_t inTransfers = 1, outTransfers = 1;
};

Chain buildChain(const std::vector<const RtlLayer *> &layers) {
  Chain chain;
  for (const RtlLayer *each : layers) {
    const RtlLayer &layer = *each;
    switch (layer.plan->layer->kind) {
    case LayerKind::Dense:
      if (layer.in.pixels)
        chain.stages.push_back(std::make_unique<Gather>(layer.in.transfers));
      chain.stages.push_back(denseStage(layer));
      break;
    case LayerKind::Conv2d:
    case LayerKind::MaxPool2d:
      chain.stages.push_back(
          std::make_unique<Generator>(layer.plan->layer->window));
      chain.stages.push_back(layer.plan->layer->kind == LayerKind::Conv2d
                                 ? denseStage(layer)
                                 : std::make_unique<Pipe>(layer.coreLatency));
      break;
    default:
      chain.stages.push_back(std::make_unique<Pipe>(layer.coreLatency));
      break;
    }
  }
  chain.inTransfers = layers.front()->in.transfers;
  chain.outTransfers = layers.back()->out.transfers;
  return chain;
}

} // namespace

absl::StatusOr<StreamTimes>
streamTiming(const std::vector<const RtlLayer *> &layers, int64_t samples) {
  StreamTimes result;
  if (samples < 1)
    return result;
  Chain chain = buildChain(layers);
  size_t n = chain.stages.size();
  int64_t inputs = samples * chain.inTransfers;
  int64_t outputs = samples * chain.outTransfers;
  int64_t limit = 1000;
  for (const RtlLayer *layer : layers) {
    Sweep sweep(layer->plan->layer->window);
    limit += 4 * samples *
             (layer->in.transfers + sweep.rows * sweep.cols +
              layer->out.transfers * layer->plan->reuse) +
             4 * layer->coreLatency;
  }
  // Transfers so far on the input and the output; the first input's cycle.
  int64_t taken = 0, given = 0, origin = -1;
  std::vector<bool> ready(n + 1), valid(n + 1), fire(n + 1);
  for (int64_t cycle = 0; given < outputs; ++cycle) {
    if (cycle > limit)
      return absl::InternalError(absl::StrCat(
          "Verilog: the timing model did not drain ", samples,
          " samples in ", limit, " cycles"));
    ready[n] = true;
    for (size_t k = n; k-- > 0;)
      ready[k] = chain.stages[k]->inReady(ready[k + 1]);
    valid[0] = cycle >= 1 && taken < inputs;
    for (size_t k = 0; k < n; ++k)
      valid[k + 1] = chain.stages[k]->outValid();
    for (size_t b = 0; b <= n; ++b)
      fire[b] = valid[b] && ready[b];
    if (fire[0] && taken++ == 0)
      origin = cycle;
    if (fire[n] && ++given % chain.outTransfers == 0)
      result.done.push_back(cycle - origin);
    for (size_t k = 0; k < n; ++k)
      chain.stages[k]->tick(fire[k], fire[k + 1], ready[k + 1]);
  }
  return result;
}

absl::StatusOr<StreamTimes> streamTiming(const RtlDesign &rtl,
                                         int64_t samples) {
  std::vector<const RtlLayer *> layers;
  for (const RtlLayer &layer : rtl.layers)
    layers.push_back(&layer);
  return streamTiming(layers, samples);
}

namespace {

/// Latency and steady gap of `layers` on their own; enough samples for
/// every layer to reach its steady state.
absl::StatusOr<std::pair<int, int>>
latencyAndGap(const std::vector<const RtlLayer *> &layers) {
  constexpr int64_t kSamples = 6;
  absl::StatusOr<StreamTimes> t = streamTiming(layers, kSamples);
  if (!t.ok())
    return t.status();
  return std::make_pair(static_cast<int>(t->done[0]),
                        static_cast<int>(t->done[kSamples - 1] -
                                         t->done[kSamples - 2]));
}

} // namespace

absl::Status timeDesign(RtlDesign &rtl) {
  std::vector<const RtlLayer *> all;
  for (RtlLayer &layer : rtl.layers) {
    absl::StatusOr<std::pair<int, int>> own = latencyAndGap({&layer});
    if (!own.ok())
      return own.status();
    std::tie(layer.latency, layer.ii) = *own;
    all.push_back(&layer);
  }
  absl::StatusOr<std::pair<int, int>> whole = latencyAndGap(all);
  if (!whole.ok())
    return whole.status();
  std::tie(rtl.latency, rtl.ii) = *whole;
  return absl::OkStatus();
}

} // namespace cuvil::fpga
