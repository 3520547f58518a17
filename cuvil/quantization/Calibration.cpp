#include "cuvil/quantization/Calibration.h"

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/BatchMultipliers.h"
#include "cuvil/serving/ModelLibrary.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/Npz.h"
#include "cuvil/support/SourceEscape.h"
#include "cuvil/support/StatusMacros.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <thread>

using namespace mlir;
namespace l1 = cuvil::l1;

namespace cuvil::quantization {

namespace {

constexpr char kPointAttr[] = "cuvil.calibration_point";
constexpr char kRangeAttr[] = "cuvil.activation_range";

/// One activation observed (several layers may share it: Q, K and V
/// projections of one input).
struct Observation {
  int input = -1;  ///< the model input it is, or
  int output = -1; ///< the calibration model's output it is read from
  int64_t multiplier = 0; ///< its dynamic dimension is multiplier * batch
  int64_t staticElements = 1;
  RangeObserver observer;
  explicit Observation(const CalibrationOptions &options)
      : observer(options.observer, options.percentile) {}
};

absl::StatusOr<func::FuncOp> soleFunction(ModuleOp module) {
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  if (funcs.size() != 1)
    return absl::InvalidArgumentError(absl::StrCat(
        "calibration needs a model of one function; it has ", funcs.size()));
  return funcs.front();
}

SmallVector<Operation *> markedOps(func::FuncOp func) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (op->hasAttr(kPointAttr))
      ops.push_back(op);
  });
  return ops;
}

/// Elements of a value for one call with `batch`.
int64_t elementsFor(const Observation &o, int64_t batch) {
  return o.staticElements * (o.multiplier ? o.multiplier * batch : 1);
}

/// The calibration data, checked against the model's inputs and in each
/// input's dtype: float64 arrays are accepted for float32 inputs (numpy's
/// default) and converted.
struct CalibrationData {
  std::vector<std::string> inputs; // bytes, per model input
  std::vector<size_t> sampleBytes;
  int64_t samples = 0;
  int64_t perCall = 1; // a static model's batch
};

absl::StatusOr<CalibrationData>
readCalibrationData(const std::string &path,
                    const serving::ModelSignature &signature) {
  ASSIGN_OR_RETURN(std::vector<NpyArray> arrays, readNpz(path));
  std::map<std::string, NpyArray *> byName;
  std::vector<std::string> names, inputNames;
  for (NpyArray &array : arrays) {
    byName[array.name] = &array;
    names.push_back(array.name);
  }
  for (const serving::TensorSpec &spec : signature.inputs)
    inputNames.push_back(spec.name);
  for (const std::string &name : names)
    if (!llvm::is_contained(inputNames, name))
      return absl::InvalidArgumentError(absl::StrCat(
          path, " has an array '", printableText(name),
          "', which is not an input of the model (inputs: ",
          printableText(absl::StrJoin(inputNames, ", ")), ")"));
  CalibrationData data;
  for (const serving::TensorSpec &spec : signature.inputs) {
    auto found = byName.find(spec.name);
    if (found == byName.end())
      return absl::InvalidArgumentError(absl::StrCat(
          path, " has no array for input '", printableText(spec.name),
          "'; save one per input: numpy.savez(path, ",
          printableText(spec.name), "=samples, ...)"));
    NpyArray &array = *found->second;
    std::string what = absl::StrCat("calibration array '",
                                    printableText(spec.name), "'");
    std::string dtype(serving::abiName(spec.datatype));
    if (array.dtype == "float64" && dtype == "float32") {
      std::string converted(array.numElements() * 4, '\0');
      for (int64_t i = 0; i < array.numElements(); ++i) {
        double v;
        std::memcpy(&v, array.data.data() + 8 * i, 8);
        float f = static_cast<float>(v);
        std::memcpy(converted.data() + 4 * i, &f, 4);
      }
      array.data = std::move(converted);
      array.dtype = dtype;
    }
    if (array.dtype != dtype)
      return absl::InvalidArgumentError(absl::StrCat(
          what, " is ", array.dtype, ", but the input is ", dtype));
    const std::vector<int64_t> &expected = spec.shape;
    bool shapeOk = array.shape.size() == expected.size() && !expected.empty();
    for (size_t d = 1; shapeOk && d < expected.size(); ++d)
      shapeOk = array.shape[d] == expected[d];
    int64_t perCall = expected.empty() || expected[0] < 0 ? 1 : expected[0];
    if (shapeOk)
      shapeOk = array.shape[0] > 0 && array.shape[0] % perCall == 0;
    if (!shapeOk) {
      std::vector<std::string> dims = {"N"};
      for (size_t d = 1; d < expected.size(); ++d)
        dims.push_back(std::to_string(expected[d]));
      return absl::InvalidArgumentError(absl::StrCat(
          what, " has shape ", serving::shapeString(array.shape),
          "; the input is ", serving::shapeString(spec.shape),
          ", so it needs shape [", absl::StrJoin(dims, ", "), "]",
          " (samples first",
          perCall > 1 ? absl::StrCat(", a multiple of ", perCall) : "", ")"));
    }
    if (data.samples && data.samples != array.shape[0])
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": the arrays hold different numbers of samples (",
          data.samples, " and ", array.shape[0], " in '",
          printableText(spec.name), "')"));
    data.samples = array.shape[0];
    data.perCall = perCall;
    data.sampleBytes.push_back(array.data.size() / array.shape[0]);
    data.inputs.push_back(std::move(array.data));
  }
  return data;
}

/// Runs the calibration model over all samples, feeding each observation.
absl::Status runCalibration(serving::Executor &executor,
                            const serving::ModelSignature &signature,
                            const CalibrationData &data,
                            const std::vector<int64_t> &outputElements,
                            std::vector<Observation> &observations,
                            int64_t &calls) {
  int64_t step = signature.dynamicBatch ? signature.maxBatch : data.perCall;
  std::vector<std::vector<float>> outputs(outputElements.size());
  calls = 0;
  for (int64_t start = 0; start < data.samples; start += step) {
    int64_t count = std::min(step, data.samples - start);
    int64_t batch = signature.dynamicBatch ? count : 1;
    std::vector<const void *> in;
    for (size_t i = 0; i < data.inputs.size(); ++i)
      in.push_back(data.inputs[i].data() + start * data.sampleBytes[i]);
    std::vector<void *> out;
    for (size_t i = 0; i < outputs.size(); ++i) {
      // Outputs are float32 or wider: a float buffer of the bytes needed.
      outputs[i].resize(outputElements[i] * (signature.dynamicBatch ? batch : 1));
      out.push_back(outputs[i].data());
    }
    RETURN_IF_ERROR(executor.run(batch, in, out));
    ++calls;
    for (Observation &o : observations) {
      const float *values =
          o.input >= 0
              ? reinterpret_cast<const float *>(in[o.input])
              : outputs[o.output].data();
      o.observer.observe(values, elementsFor(o, batch));
    }
  }
  return absl::OkStatus();
}

std::string reportName(const std::string &text) { return printableText(text); }

/// What calibration observes: one observation per distinct activation of
/// the marked ops (in the order first seen), and where the calibration
/// model gives each.
struct ObservationPlan {
  SmallVector<Operation *> marked;
  std::vector<Observation> observations;
  /// Per marked op, its observation.
  std::vector<size_t> observationOf;
  /// Integer I/O: (argument or result number, observation) of each float32
  /// input and output.
  std::vector<std::pair<unsigned, size_t>> ioInputs, ioOutputs;
  /// The observations read from outputs added to the calibration model.
  std::vector<size_t> exposed;
  /// Per output of the calibration model, its float buffer's elements at
  /// batch 1 (times the batch when it is dynamic).
  std::vector<int64_t> outputElements;
};

absl::StatusOr<ObservationPlan> planObservations(func::FuncOp func,
                                                 ArrayRef<Operation *> marked,
                                                 const CalibrationOptions &options) {
  cuvil::BatchMultipliers multipliers;
  if (failed(multipliers.compute(func)))
    return absl::InvalidArgumentError(
        "calibration cannot size the model's tensors by its batch");
  ObservationPlan plan;
  plan.marked.assign(marked.begin(), marked.end());
  llvm::DenseMap<Value, size_t> seen;
  auto returnOp = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  // The observation of `value`, added the first time it is seen.
  auto observationOf = [&](Value value) -> size_t {
    auto [it, inserted] = seen.try_emplace(value, plan.observations.size());
    if (!inserted)
      return it->second;
    Observation o(options);
    auto type = cast<RankedTensorType>(value.getType());
    o.multiplier = multipliers.get(value);
    o.staticElements = cuvil::BatchMultipliers::staticProduct(type);
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      o.input = static_cast<int>(arg.getArgNumber());
    } else {
      auto returned = llvm::find(returnOp.getOperands(), value);
      if (returned != returnOp.getOperands().end()) {
        o.output = static_cast<int>(returned - returnOp.getOperands().begin());
      } else {
        o.output =
            static_cast<int>(returnOp.getNumOperands() + plan.exposed.size());
        plan.exposed.push_back(plan.observations.size());
      }
    }
    plan.observations.push_back(std::move(o));
    return it->second;
  };
  for (Operation *op : marked)
    plan.observationOf.push_back(observationOf(op->getOperand(0)));
  auto isF32 = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType().isF32();
  };
  if (options.observeIo) {
    for (BlockArgument arg : func.getArguments())
      if (isF32(arg))
        plan.ioInputs.push_back({arg.getArgNumber(), observationOf(arg)});
    for (OpOperand &result : returnOp->getOpOperands())
      if (isF32(result.get()))
        plan.ioOutputs.push_back(
            {result.getOperandNumber(), observationOf(result.get())});
  }
  for (Value v : returnOp.getOperands()) {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t k = multipliers.get(v);
    int64_t bytes = cuvil::BatchMultipliers::staticProduct(type) *
                    ((type.getElementTypeBitWidth() + 7) / 8) * (k ? k : 1);
    plan.outputElements.push_back((bytes + 3) / 4);
  }
  for (size_t index : plan.exposed)
    plan.outputElements.push_back(
        plan.observations[index].staticElements *
        std::max<int64_t>(1, plan.observations[index].multiplier));
  return plan;
}

/// The float32 model with the exposed activations as extra outputs.
absl::StatusOr<OwningOpRef<ModuleOp>>
buildObservedModel(ModuleOp module, const ObservationPlan &plan) {
  OwningOpRef<ModuleOp> copy = module.clone();
  ASSIGN_OR_RETURN(func::FuncOp copyFunc, soleFunction(*copy));
  SmallVector<Operation *> copyMarked = markedOps(copyFunc);
  auto copyReturn =
      cast<func::ReturnOp>(copyFunc.getBody().front().getTerminator());
  SmallVector<Value> results(copyReturn.getOperands());
  OpBuilder builder(copyReturn);
  for (size_t index : plan.exposed) {
    size_t point =
        llvm::find(plan.observationOf, index) - plan.observationOf.begin();
    Value value = copyMarked[point]->getOperand(0);
    const Observation &o = plan.observations[index];
    // An output's one dynamic dimension is its first (the ABI's batch):
    // [B, S, E] transposed to [S, B, E] is read as [k * B, P] instead.
    if (o.multiplier)
      value = l1::ReshapeOp::create(
          builder, value.getLoc(), value,
          builder.getDenseI64ArrayAttr({-1, o.staticElements}));
    unsigned position = copyFunc.getNumResults();
    if (failed(copyFunc.insertResult(
            position, value.getType(),
            builder.getDictionaryAttr(builder.getNamedAttr(
                "cuvil.name", builder.getStringAttr(absl::StrCat(
                                  "cuvil_calibration_", position)))))))
      return absl::InternalError("cannot add a calibration output");
    results.push_back(value);
  }
  copyReturn->setOperands(results);
  for (Operation *op : copyMarked)
    op->removeAttr(kPointAttr);
  return copy;
}

/// Compiles `observed` for this machine, loads it and runs it over the
/// calibration data: once for ranges, again for histograms if the
/// observer needs them.
absl::Status observe(ModuleOp observed, ObservationPlan &plan,
                     const CalibrationOptions &options,
                     const HostCompiler &compile,
                     const std::function<void(absl::string_view)> &progress,
                     QuantizationReport &report) {
  if (progress)
    progress(absl::StrCat("calibrating: building the float32 model to observe ",
                          plan.observations.size(), " activations"));
  ASSIGN_OR_RETURN(std::string soPath, compile(observed));
  serving::LoadOptions load;
  load.weightsPath = "";
  ASSIGN_OR_RETURN(std::shared_ptr<serving::ModelLibrary> library,
                   serving::ModelLibrary::load(soPath, load));
  int threads = static_cast<int>(
      std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
  ASSIGN_OR_RETURN(std::unique_ptr<serving::Executor> executor,
                   library->createExecutor(threads));
  ASSIGN_OR_RETURN(CalibrationData data,
                   readCalibrationData(options.dataPath, library->signature()));
  report.samples = data.samples;
  bool histograms = !plan.observations.empty() &&
                    plan.observations.front().observer.needsHistogram();
  for (int pass = 0; pass < (histograms ? 2 : 1); ++pass) {
    if (progress)
      progress(absl::StrCat("calibrating: ", report.observer, " observers, ",
                            pass == 0 ? "ranges" : "histograms", " over ",
                            data.samples, " samples"));
    if (pass == 1)
      for (Observation &o : plan.observations)
        o.observer.startHistogram();
    RETURN_IF_ERROR(runCalibration(*executor, library->signature(), data,
                                   plan.outputElements, plan.observations,
                                   report.calls));
  }
  return absl::OkStatus();
}

/// A model input's or output's ABI name, as the artifact's metadata gives it.
std::string ioName(func::FuncOp func, unsigned index, bool input) {
  auto name = input ? func.getArgAttrOfType<StringAttr>(index, "cuvil.name")
                    : func.getResultAttrOfType<StringAttr>(index, "cuvil.name");
  return name ? name.str() : absl::StrCat(input ? "input" : "output", index);
}

/// Sets the chosen range of each float32 input and output (integer I/O).
void recordIoRanges(func::FuncOp func, const ObservationPlan &plan,
                    QuantizationReport &report) {
  auto record = [&](unsigned index, size_t observation, bool input) {
    const RangeObserver &observer = plan.observations[observation].observer;
    auto [lo, hi] = observer.getRange();
    auto range = DenseF64ArrayAttr::get(func.getContext(), {lo, hi});
    if (input)
      func.setArgAttr(index, "cuvil.io_range", range);
    else
      func.setResultAttr(index, "cuvil.io_range", range);
    IoReport io;
    io.input = input;
    io.observed = true;
    io.observedMin = observer.getMin();
    io.observedMax = observer.getMax();
    io.name = ioName(func, index, input);
    report.io.push_back(std::move(io));
  };
  for (auto [index, observation] : plan.ioInputs)
    record(index, observation, true);
  for (auto [index, observation] : plan.ioOutputs)
    record(index, observation, false);
}

/// Sets each marked op's chosen range and reports it.
void recordRanges(const ObservationPlan &plan, QuantizationReport &report) {
  for (size_t i = 0; i < plan.marked.size(); ++i) {
    Operation *op = plan.marked[i];
    const RangeObserver &observer =
        plan.observations[plan.observationOf[i]].observer;
    auto [lo, hi] = observer.getRange();
    op->setAttr(kRangeAttr, DenseF64ArrayAttr::get(op->getContext(), {lo, hi}));
    op->removeAttr(kPointAttr);
    DiagnosticInfo where = describeLocation(op->getLoc());
    LayerReport layer;
    layer.node = where.node;
    layer.op = op->getName().getStringRef().str();
    layer.location = where.location;
    layer.observedMin = observer.getMin();
    layer.observedMax = observer.getMax();
    layer.lo = lo;
    layer.hi = hi;
    report.layers.push_back(std::move(layer));
  }
}

} // namespace

absl::StatusOr<QuantizationReport>
calibrate(ModuleOp module, const CalibrationOptions &options,
          const HostCompiler &compile,
          const std::function<void(absl::string_view)> &progress) {
  QuantizationReport report;
  report.observer = std::string(observerName(options.observer));
  ASSIGN_OR_RETURN(func::FuncOp func, soleFunction(module));
  SmallVector<Operation *> marked = markedOps(func);
  if (marked.empty() && !options.observeIo)
    return report;
  ASSIGN_OR_RETURN(ObservationPlan plan,
                   planObservations(func, marked, options));
  if (plan.observations.empty())
    return report;
  ASSIGN_OR_RETURN(OwningOpRef<ModuleOp> observed,
                   buildObservedModel(module, plan));
  RETURN_IF_ERROR(observe(*observed, plan, options, compile, progress, report));
  recordRanges(plan, report);
  recordIoRanges(func, plan, report);
  return report;
}

namespace {

/// Fills the report's integer inputs and outputs from `func`'s signature.
void describeCompiledIo(func::FuncOp func, QuantizationReport &report) {
  auto describe = [&](Type type, bool input, unsigned index) {
    auto q = dyn_cast<quant::UniformQuantizedType>(getElementTypeOrSelf(type));
    if (!q)
      return;
    std::string text = ioName(func, index, input);
    auto io = llvm::find_if(report.io, [&](const IoReport &r) {
      return r.input == input && r.name == text;
    });
    if (io == report.io.end()) {
      report.io.push_back(IoReport{});
      io = std::prev(report.io.end());
      io->name = text;
      io->input = input;
    }
    llvm::raw_string_ostream(io->type) << q;
    io->storage = absl::StrCat(q.isSigned() ? "int" : "uint",
                               q.getStorageTypeIntegralWidth());
    io->scale = q.getScale();
    io->zeroPoint = q.getZeroPoint();
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    describe(func.getArgumentTypes()[i], true, i);
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    describe(func.getResultTypes()[i], false, i);
  // Those left untyped were not converted (not float32 after all).
  llvm::erase_if(report.io, [](const IoReport &r) { return r.type.empty(); });
}

} // namespace

void describeCompiledLayers(ModuleOp module, QuantizationReport &report) {
  for (auto func : module.getOps<func::FuncOp>())
    describeCompiledIo(func, report);
  report.weightMax = l1::TargetAttr::lookupOrDefault(module).getInt8WeightMax();
  module.walk([&](Operation *op) {
    if (!isa<l1::QuantizedMatmulOp, l1::QuantizedConv2dOp>(op))
      return;
    std::string node = describeLocation(op->getLoc()).node;
    auto layer = llvm::find_if(report.layers, [&](const LayerReport &l) {
      return !l.quantized && l.node == node;
    });
    if (layer == report.layers.end())
      return;
    // Activation and weights are operands 0 and 1 of both.
    auto a = cast<quant::UniformQuantizedType>(
        cast<RankedTensorType>(op->getOperand(0).getType()).getElementType());
    layer->quantized = true;
    llvm::raw_string_ostream os(layer->activationType);
    os << a;
    layer->scale = a.getScale();
    layer->zeroPoint = a.getZeroPoint();
    Type w = cast<RankedTensorType>(op->getOperand(1).getType()).getElementType();
    SmallVector<double> scales;
    if (auto perAxis = dyn_cast<quant::UniformQuantizedPerAxisType>(w))
      scales.assign(perAxis.getScales().begin(), perAxis.getScales().end());
    else
      scales.push_back(cast<quant::UniformQuantizedType>(w).getScale());
    layer->weightScaleMin = *llvm::min_element(scales);
    layer->weightScaleMax = *llvm::max_element(scales);
    auto result = cast<RankedTensorType>(op->getResult(0).getType());
    // Output columns (a product's last dimension, a convolution's channels).
    layer->columns = result.getDimSize(isa<l1::QuantizedConv2dOp>(op)
                                           ? 1
                                           : result.getRank() - 1);
  });
}

std::string QuantizationReport::toText() const {
  std::string text = absl::StrFormat(
      "int8 quantization: %s observers over %d samples (%d calls); weights "
      "in [-%d, %d]\n",
      observer, samples, calls, weightMax, weightMax);
  size_t width = 5;
  for (const LayerReport &l : layers)
    width = std::max(width, reportName(l.node).size());
  absl::StrAppendFormat(&text, "%-*s  %-8s  %-25s  %-25s  %s\n", width,
                        "layer", "op", "observed [min, max]",
                        "quantized [lo, hi]", "activation / weights");
  for (const LayerReport &l : layers) {
    std::string kind(absl::StripPrefix(l.op, "cuvil."));
    std::string compiled =
        l.quantized
            ? absl::StrFormat("uint8 scale %.6g zero %d / int8 x %d columns, "
                              "scales %.3g..%.3g",
                              l.scale, l.zeroPoint, l.columns, l.weightScaleMin,
                              l.weightScaleMax)
            : "float32 (not folded)";
    absl::StrAppendFormat(
        &text, "%-*s  %-8s  %-25s  %-25s  %s\n", width, reportName(l.node), kind,
        absl::StrFormat("[%.6g, %.6g]", l.observedMin, l.observedMax),
        absl::StrFormat("[%.6g, %.6g]", l.lo, l.hi), compiled);
  }
  if (!io.empty()) {
    text += "integer I/O (real = scale * (q - zero point)):\n";
    for (const IoReport &r : io)
      absl::StrAppendFormat(
          &text, "  %-6s %-*s  %s scale %.6g zero %d%s\n",
          r.input ? "input" : "output", width, reportName(r.name), r.storage,
          r.scale,
          r.zeroPoint,
          r.observed ? absl::StrFormat("  (observed [%.6g, %.6g])",
                                       r.observedMin, r.observedMax)
                     : std::string("  (the model's own quantization)"));
  }
  if (!float32.empty()) {
    text += "kept in float32:\n";
    for (const std::string &line : float32)
      absl::StrAppend(&text, "  ", printableText(line), "\n");
  }
  return text;
}

std::string QuantizationReport::toJson() const {
  llvm::json::Array layerArray;
  for (const LayerReport &l : layers) {
    llvm::json::Object entry{
        {"node", jsonText(l.node)},
        {"op", l.op},
        {"location", jsonText(l.location)},
        {"observed_min", l.observedMin},
        {"observed_max", l.observedMax},
        {"range_min", l.lo},
        {"range_max", l.hi},
        {"quantized", l.quantized},
    };
    if (l.quantized) {
      entry["activation_type"] = l.activationType;
      entry["scale"] = l.scale;
      entry["zero_point"] = l.zeroPoint;
      entry["weight_scale_min"] = l.weightScaleMin;
      entry["weight_scale_max"] = l.weightScaleMax;
      entry["columns"] = l.columns;
    }
    layerArray.push_back(std::move(entry));
  }
  llvm::json::Array ioArray;
  for (const IoReport &r : io) {
    llvm::json::Object entry{{"name", jsonText(r.name)},
                             {"input", r.input},
                             {"type", r.type},
                             {"dtype", r.storage},
                             {"scale", r.scale},
                             {"zero_point", r.zeroPoint}};
    if (r.observed) {
      entry["observed_min"] = r.observedMin;
      entry["observed_max"] = r.observedMax;
    }
    ioArray.push_back(std::move(entry));
  }
  llvm::json::Array kept;
  for (const std::string &line : float32)
    kept.push_back(jsonText(line));
  llvm::json::Object root{{"scheme", "int8"},
                          {"observer", observer},
                          {"samples", samples},
                          {"calls", calls},
                          {"weight_max", weightMax},
                          {"layers", std::move(layerArray)},
                          {"io", std::move(ioArray)},
                          {"float32", std::move(kept)}};
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::json::Value(std::move(root));
  return json;
}

} // namespace cuvil::quantization
