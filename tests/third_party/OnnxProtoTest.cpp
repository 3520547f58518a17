// Debian's onnx.proto through native proto_library/cc_proto_library.
#include "cuvil_onnx/onnx.pb.h"

#include "gtest/gtest.h"

TEST(OnnxProtoTest, ModelRoundTrips) {
  cuvil::onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  cuvil::onnx::NodeProto *node = model.mutable_graph()->add_node();
  node->set_op_type("Relu");
  node->set_name("relu_0");
  node->add_input("x");
  node->add_output("y");
  std::string bytes;
  ASSERT_TRUE(model.SerializeToString(&bytes));

  cuvil::onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_EQ(parsed.opset_import(0).version(), 17);
  EXPECT_EQ(parsed.graph().node(0).op_type(), "Relu");
  EXPECT_FALSE(parsed.ParseFromString("\xff\xff\xff garbage"));
}
