//===- OpRegistry.cpp - which ONNX ops convert, and the error for the rest ===//
//
// The one list of converters by (domain, op type), and the check that runs
// before anything is built: every node's op must have a converter, or one
// error names all that lack one, where they are, and why those left out on
// purpose are.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

namespace cuvil::onnx_import {

const llvm::StringMap<Importer::Converter> &Importer::getConverters() {
  static const llvm::StringMap<Converter> converters = [] {
    llvm::StringMap<Converter> map;
    for (const char *op : {"Identity", "Dropout"})
      map[op] = &Importer::convertIdentity;
    for (const auto &unary : getUnaryMakers())
      map[unary.getKey()] = &Importer::convertUnary;
    for (const char *op :
         {"Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "LessOrEqual",
          "Greater", "GreaterOrEqual", "And", "Or", "Xor"})
      map[op] = &Importer::convertBinary;
    for (const char *op : {"Max", "Min", "Sum", "Mean"})
      map[op] = &Importer::convertVariadic;
    map["Mod"] = &Importer::convertMod;
    map["PRelu"] = &Importer::convertPRelu;
    map["Where"] = &Importer::convertWhere;
    map["Clip"] = &Importer::convertClip;
    map["Cast"] = &Importer::convertCast;
    map["CastLike"] = &Importer::convertCast;
    map["MatMul"] = &Importer::convertMatMul;
    map["Gemm"] = &Importer::convertGemm;
    map["Conv"] = &Importer::convertConv;
    map["ConvTranspose"] = &Importer::convertConvTranspose;
    map["BatchNormalization"] = &Importer::convertBatchNorm;
    map["MaxPool"] = &Importer::convertPool;
    map["AveragePool"] = &Importer::convertPool;
    map["GlobalAveragePool"] = &Importer::convertGlobalPool;
    map["GlobalMaxPool"] = &Importer::convertGlobalPool;
    map["Softmax"] = &Importer::convertSoftmax;
    map["LogSoftmax"] = &Importer::convertSoftmax;
    for (const char *op :
         {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
          "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
          "ReduceSumSquare"})
      map[op] = &Importer::convertReduce;
    map["ArgMax"] = &Importer::convertArgReduce;
    map["ArgMin"] = &Importer::convertArgReduce;
    map["Tile"] = &Importer::convertTile;
    map["DepthToSpace"] = &Importer::convertDepthSpace;
    map["SpaceToDepth"] = &Importer::convertDepthSpace;
    map["Trilu"] = &Importer::convertTrilu;
    map["Size"] = &Importer::convertSize;
    map["Range"] = &Importer::convertRange;
    map["EyeLike"] = &Importer::convertEyeLike;
    map["Resize"] = &Importer::convertResize;
    map["GatherElements"] = &Importer::convertGatherElements;
    map["GatherND"] = &Importer::convertGatherND;
    map["ScatterND"] = &Importer::convertScatterND;
    map["TopK"] = &Importer::convertTopK;
    map["LRN"] = &Importer::convertLrn;
    map["ReverseSequence"] = &Importer::convertReverseSequence;
    map["GridSample"] = &Importer::convertGridSample;
    map["BitShift"] = &Importer::convertBitShift;
    map["DFT"] = &Importer::convertDft;
    map["Compress"] = &Importer::convertCompress;
    map["STFT"] = &Importer::convertStft;
    map["MaxUnpool"] = &Importer::convertMaxUnpool;
    map["Det"] = &Importer::convertDet;
    map["RoiAlign"] = &Importer::convertRoiAlign;
    map["MelWeightMatrix"] = &Importer::convertMelWeightMatrix;
    map["DynamicQuantizeLinear"] = &Importer::convertDynamicQuantizeLinear;
    map["NegativeLogLikelihoodLoss"] = &Importer::convertNllLoss;
    map["SoftmaxCrossEntropyLoss"] = &Importer::convertSoftmaxCrossEntropy;
    map["Einsum"] = &Importer::convertEinsum;
    map["ScatterElements"] = &Importer::convertScatterElements;
    map["Scatter"] = &Importer::convertScatterElements;
    map["RNN"] = &Importer::convertRecurrent;
    map["GRU"] = &Importer::convertRecurrent;
    map["LSTM"] = &Importer::convertRecurrent;
    map["If"] = &Importer::convertIf;
    map["Loop"] = &Importer::convertLoop;
    map["Scan"] = &Importer::convertScan;
    map["Hardmax"] = &Importer::convertHardmax;
    map["OneHot"] = &Importer::convertOneHot;
    map["CumSum"] = &Importer::convertCumSum;
    map["InstanceNormalization"] = &Importer::convertStandardize;
    map["MeanVarianceNormalization"] = &Importer::convertStandardize;
    for (const char *op : {"HannWindow", "HammingWindow", "BlackmanWindow"})
      map[op] = &Importer::convertWindow;
    map["Upsample"] = &Importer::convertResize;
    map["LayerNormalization"] = &Importer::convertLayerNorm;
    map["Flatten"] = &Importer::convertFlatten;
    map["Reshape"] = &Importer::convertReshape;
    map["Transpose"] = &Importer::convertTranspose;
    map["Concat"] = &Importer::convertConcat;
    map["Split"] = &Importer::convertSplit;
    map["Slice"] = &Importer::convertSlice;
    map["Squeeze"] = &Importer::convertSqueeze;
    map["Unsqueeze"] = &Importer::convertUnsqueeze;
    map["Gather"] = &Importer::convertGather;
    map["Expand"] = &Importer::convertExpand;
    map["Pad"] = &Importer::convertPad;
    map["Shape"] = &Importer::convertShape;
    map["Constant"] = &Importer::convertConstant;
    map["ConstantOfShape"] = &Importer::convertConstantOfShape;
    map["QuantizeLinear"] = &Importer::convertQuantizeLinear;
    map["DequantizeLinear"] = &Importer::convertDequantizeLinear;
    map["QLinearMatMul"] = &Importer::convertQLinearMatMul;
    map["QLinearConv"] = &Importer::convertQLinearConv;
    map["ConvInteger"] = &Importer::convertIntegerProduct;
    map["MatMulInteger"] = &Importer::convertIntegerProduct;
    return map;
  }();
  return converters;
}

const llvm::StringMap<Importer::Converter> &Importer::getMlConverters() {
  static const llvm::StringMap<Converter> converters = [] {
    llvm::StringMap<Converter> map;
    map["TreeEnsembleRegressor"] = &Importer::convertTreeEnsemble;
    map["TreeEnsembleClassifier"] = &Importer::convertTreeEnsemble;
    return map;
  }();
  return converters;
}

const llvm::StringMap<Importer::Converter> &Importer::getCuvilConverters() {
  static const llvm::StringMap<Converter> converters = [] {
    llvm::StringMap<Converter> map;
    map["XGBoostModel"] = &Importer::convertEmbeddedForest;
    map["LightGBMModel"] = &Importer::convertEmbeddedForest;
    return map;
  }();
  return converters;
}

Importer::Converter Importer::lookupConverter(const onnx::NodeProto &node) {
  if (node.domain().empty() || node.domain() == "ai.onnx")
    return getConverters().lookup(node.op_type());
  if (node.domain() == "ai.onnx.ml")
    return getMlConverters().lookup(node.op_type());
  if (node.domain() == "ai.cuvil")
    return getCuvilConverters().lookup(node.op_type());
  return nullptr;
}

/// Why an op Cuvil does not compile is left out (not merely not built yet),
/// for the error to say; empty for the rest.
static StringRef whyLeftOut(StringRef op) {
  static const llvm::StringMap<StringRef> reasons = [] {
    llvm::StringMap<StringRef> m;
    for (StringRef o : {"NonZero", "Unique", "NonMaxSuppression"})
      m[o] = "output shapes that depend on the input's values, and Cuvil's "
             "outputs have shapes known at compile time (a dynamic batch "
             "aside): compute them outside the model, or cut the graph "
             "before them";
    for (StringRef o :
         {"SequenceInsert", "SequenceLength", "SequenceMap", "SequenceAt",
          "SequenceConstruct", "SequenceEmpty", "SequenceErase",
          "SplitToSequence", "ConcatFromSequence", "OptionalGetElement",
          "OptionalHasElement", "Optional"})
      m[o] = "sequences and optionals, and Cuvil's C ABI passes tensors";
    for (StringRef o : {"StringNormalizer", "TfIdfVectorizer", "RegexFullMatch"})
      m[o] = "strings, and Cuvil's C ABI passes numbers";
    for (StringRef o : {"Adagrad", "Adam", "Momentum", "Gradient"})
      m[o] = "training steps, and Cuvil compiles inference";
    for (StringRef o : {"Bernoulli", "RandomUniformLike", "RandomNormalLike",
                        "RandomUniform", "RandomNormal", "Multinomial"})
      m[o] = "random sampling, which an inference model does outside the "
             "compiled graph";
    return m;
  }();
  return reasons.lookup(op);
}

LogicalResult Importer::checkSupported() {
  // Collect every unsupported (op, domain) with all its nodes, so that one
  // error tells the user everything that is missing.
  std::map<std::string, std::vector<std::string>> unsupported;
  std::map<std::string, Location> firstNode;
  std::map<std::string, std::set<std::string>> leftOut;
  auto check = [&](const onnx::NodeProto &node, size_t i) {
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (lookupConverter(node))
      return;
    std::string key = absl::StrCat("'", node.op_type(), "' (domain ",
                                   defaultDomain ? "ai.onnx" : node.domain(),
                                   ", opset ", opset, ")");
    // Optimizers live in the preview training domain.
    bool knownDomain =
        defaultDomain || node.domain() == "ai.onnx.preview.training";
    if (StringRef why = knownDomain ? whyLeftOut(node.op_type()) : "";
        !why.empty())
      leftOut[why.str()].insert(node.op_type());
    std::string where =
        node.name().empty() ? absl::StrCat("#", i) : node.name();
    if (std::optional<SourceFrame> frame =
            parseTorchDocString(node.doc_string()))
      absl::StrAppend(&where, " (", frame->file, ":", frame->line, ")");
    unsupported[key].push_back(std::move(where));
    firstNode.try_emplace(key, nodeLoc(node, static_cast<int>(i)));
  };
  // Subgraphs (If's branches, Loop's body) too.
  forEachGraph(model.graph(), [&](const onnx::GraphProto &graph) {
    for (auto [i, node] : llvm::enumerate(graph.node()))
      check(node, i);
  });
  if (unsupported.empty())
    return success();
  std::vector<std::string> parts;
  for (auto &[op, nodes] : unsupported)
    parts.push_back(absl::StrCat(op, " at node", nodes.size() > 1 ? "s " : " ",
                                 absl::StrJoin(nodes, ", ")));
  std::string why;
  for (auto &[reason, ops] : leftOut)
    absl::StrAppend(&why, " Left out on purpose: ", absl::StrJoin(ops, ", "),
                    " (", reason, ").");
  // Reported at the model file; the first listed node's location rides
  // along as the fused location's metadata, for APIs that want the user's
  // line as a field (cuvil.CompileError.location).
  Location fileLoc = FileLineColLoc::get(&context, options.modelPath, 0, 0);
  Location loc = FusedLoc::get(&context, {fileLoc},
                               LocationAttr(firstNode.begin()->second));
  return emitError(loc)
         << "unsupported ONNX operators: " << absl::StrJoin(parts, "; ")
         << "." << why
         << " Nothing was compiled; see docs/ARCHITECTURE.md for the "
            "supported set.";
}

} // namespace cuvil::onnx_import
