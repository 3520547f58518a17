#include "cuvil/passes/GlobalConstants.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

namespace cuvil {

memref::GlobalOp createConstantGlobal(SymbolTable &symbols, Operation *func,
                                      Location loc, StringRef name,
                                      MemRefType type, ArrayRef<char> bytes) {
  AsmResourceBlob blob =
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, 64);
  auto value = DenseResourceElementsAttr::get(
      RankedTensorType::get(type.getShape(), type.getElementType()), name,
      std::move(blob));
  OpBuilder builder(func);
  auto global = memref::GlobalOp::create(
      builder, loc, name, builder.getStringAttr("private"), type, value,
      /*constant=*/true, builder.getI64IntegerAttr(64));
  symbols.insert(global); // Renames on a clash.
  return global;
}

Value createConstantGlobalRead(SymbolTable &symbols, Operation *user,
                               StringRef name, MemRefType type,
                               ArrayRef<char> bytes) {
  memref::GlobalOp global =
      createConstantGlobal(symbols, user->getParentOfType<func::FuncOp>(),
                           user->getLoc(), name, type, bytes);
  OpBuilder builder(user);
  return memref::GetGlobalOp::create(builder, user->getLoc(), type,
                                     global.getSymName());
}

} // namespace cuvil
