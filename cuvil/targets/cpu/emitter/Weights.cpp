//===- Weights.cpp - a model's constants, inline or in the blob -----------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "cuvil/support/ElementsBytes.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstring>

namespace cuvil::cpu::emitter {

using namespace mlir;

namespace {

/// A C99 definition of `symbol` holding `data`: a union gives the typed
/// view of the words without breaking C99 aliasing rules; words are
/// little-endian like x86-64 and aarch64.
std::string inlineDefinition(const std::string &symbol, const std::string &ct,
                             int64_t count, std::string data) {
  size_t words = (data.size() + 7) / 8;
  data.resize(words * 8, 0);
  std::string decl = "static const union { uint64_t words[" +
                     std::to_string(std::max<size_t>(words, 1)) + "]; " + ct +
                     " values[" + std::to_string(std::max<int64_t>(count, 1)) +
                     "]; } " + symbol + " CUVIL_ALIGN64 = {{";
  for (size_t w = 0; w < words; ++w) {
    uint64_t v = 0;
    std::memcpy(&v, data.data() + 8 * w, 8);
    if (w % 4 == 0)
      decl += "\n    ";
    decl += llvm::formatv("{0:x16}u, ", v).str();
  }
  if (words == 0)
    decl += "0";
  return decl + "}};\n";
}

} // namespace

LogicalResult Emitter::emitWeight(memref::GetGlobalOp getGlobal) {
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      getGlobal, getGlobal.getNameAttr());
  if (!global || !global.getInitialValue())
    return getGlobal.emitOpError("refers to a global without a value");
  std::string &symbol = weightSymbols[global.getSymName()];
  MemRefType type = global.getType();
  Type element = type.getElementType();
  std::string ct = cType(element);
  if (ct.empty())
    return global.emitOpError("has element type ")
           << element << ", not supported by the CPU targets yet";
  if (symbol.empty()) {
    // The weight's bytes, as stored in the artifact.
    int64_t count = type.getNumElements();
    absl::StatusOr<std::string> data =
        getElementsBytes(*global.getInitialValue());
    if (!data.ok())
      return global.emitOpError("has an initial value the CPU targets cannot "
                                "store: ")
             << data.status().message();
    if (static_cast<int64_t>(data->size()) != count * elementBytes(element))
      return global.emitOpError("holds ")
             << data->size() << " bytes, but its type needs "
             << count * elementBytes(element);
    weightBytes += static_cast<int64_t>(data->size());
    symbol = "cuvil_w" + std::to_string(weightSymbols.size() - 1);
    if (options.inlineWeights) {
      weightsDecls += inlineDefinition(symbol, ct, count, *std::move(data));
      symbol += ".values";
    } else {
      size_t offset = (weightsBlob.size() + 63) / 64 * 64;
      weightsBlob.resize(offset, 0);
      weightsBlob += *data;
      symbol = "((const " + ct + " *)(cuvil_weights + " +
               std::to_string(offset) + "))";
    }
  }
  Buffer b{symbol, cast<MemRefType>(getGlobal.getType()), {}};
  for (int64_t d : type.getShape())
    b.dims.push_back(std::to_string(d));
  buffers[getGlobal.getResult()] = b;
  return success();
}

} // namespace cuvil::cpu::emitter
