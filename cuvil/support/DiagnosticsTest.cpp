#include "cuvil/support/Diagnostics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"

#include "gtest/gtest.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

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

TEST(DiagnosticsTest, TheFirstErrorIsAlsoAPayloadOfFields) {
  mlir::MLIRContext context;
  mlir::OpBuilder builder(&context);
  cuvil::StatusDiagnosticHandler handler(&context);
  // An op error at an ONNX node with its Python line: the op, the node and
  // the user's position come from the diagnostic, not from its text.
  auto python = mlir::FileLineColLoc::get(&context, "net.py", 21, 0);
  auto node = mlir::NameLoc::get(builder.getStringAttr("/fc/MatMul"), python);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(node);
  module->emitOpError("contracting dimensions differ");
  mlir::emitError(mlir::UnknownLoc::get(&context), "second");
  absl::Status status = handler.consumeStatus();
  std::optional<cuvil::DiagnosticInfo> info = cuvil::getDiagnosticInfo(status);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->op, "builtin.module");
  EXPECT_EQ(info->node, "/fc/MatMul");
  EXPECT_EQ(info->location, "net.py:21");
  EXPECT_EQ(info->message, "'builtin.module' op contracting dimensions differ");

  // Reported at the model file, about a node: the fused location's metadata.
  auto file = mlir::FileLineColLoc::get(&context, "model.onnx", 0, 0);
  auto about = mlir::FusedLoc::get(&context, {file},
                                   mlir::LocationAttr(node));
  mlir::emitError(about, "unsupported ONNX operators: 'NonZero' (domain "
                         "ai.onnx, opset 13) at node nz");
  status = handler.consumeStatus();
  EXPECT_EQ(status.message(), "model.onnx: error: unsupported ONNX operators: "
                              "'NonZero' (domain ai.onnx, opset 13) at node nz");
  info = cuvil::getDiagnosticInfo(status);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->op, "NonZero");
  EXPECT_EQ(info->location, "net.py:21");
  EXPECT_EQ(info->node, "/fc/MatMul");

  // Fields hold no raw control characters (NUL separates them).
  mlir::emitError(mlir::NameLoc::get(builder.getStringAttr(
                      std::string("a\0b\nc", 5))),
                  "boom");
  info = cuvil::getDiagnosticInfo(handler.consumeStatus());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->node, "a\\x00b\\x0ac");
  EXPECT_FALSE(cuvil::getDiagnosticInfo(absl::InvalidArgumentError("x")));
}

} // namespace
