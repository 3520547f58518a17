#include "cuvil/support/Diagnostics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"

#include "gtest/gtest.h"

namespace {

TEST(DiagnosticsTest, FormatsUserFacingLocations) {
  mlir::MLIRContext context;
  auto file = mlir::FileLineColLoc::get(&context, "model.py", 12, 5);
  EXPECT_EQ(cuvil::formatLocation(file), "model.py:12:5");
  auto node = mlir::NameLoc::get(mlir::StringAttr::get(&context, "Conv_3"));
  EXPECT_EQ(cuvil::formatLocation(node), "'Conv_3'");
  auto both =
      mlir::NameLoc::get(mlir::StringAttr::get(&context, "aten::mm"), file);
  EXPECT_EQ(cuvil::formatLocation(both), "'aten::mm' (model.py:12:5)");
  auto onnxNode = mlir::NameLoc::get(
      mlir::StringAttr::get(&context, "/layer1/Conv"),
      mlir::FileLineColLoc::get(&context, "resnet18.onnx", 0, 0));
  EXPECT_EQ(cuvil::formatLocation(onnxNode), "'/layer1/Conv' (resnet18.onnx)");
}

TEST(DiagnosticsTest, CollectsErrorsWithNotesIntoStatus) {
  mlir::MLIRContext context;
  cuvil::StatusDiagnosticHandler handler(&context);
  EXPECT_TRUE(handler.consumeStatus().ok());

  auto loc = mlir::NameLoc::get(mlir::StringAttr::get(&context, "MatMul_0"));
  mlir::emitWarning(loc, "slow path");
  EXPECT_FALSE(handler.hadError());
  mlir::InFlightDiagnostic diag = mlir::emitError(loc, "shape mismatch");
  diag.attachNote(mlir::FileLineColLoc::get(&context, "m.py", 3, 1))
      << "called here";
  diag.report();
  mlir::emitError(mlir::UnknownLoc::get(&context), "second");
  EXPECT_TRUE(handler.hadError());
  ASSERT_EQ(handler.getMessages().size(), 3u);

  absl::Status status =
      handler.consumeStatus(absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), "'MatMul_0': error: shape mismatch\n"
                              "  m.py:3:1: note: called here\n"
                              "loc(unknown): error: second");
  // Consumed: the next query starts clean.
  EXPECT_TRUE(handler.consumeStatus().ok());
}

} // namespace
