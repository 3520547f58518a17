"""gRPC C++ code generation with Debian's protoc and grpc_cpp_plugin."""

def cc_grpc_library(name, proto_src, cc_proto_dep, deps = [], **kwargs):
    """Generates the gRPC service stubs of `proto_src` as a cc_library.

    Message classes come from `cc_proto_dep` (a native cc_proto_library of the
    same .proto); this adds `<name>.grpc.pb.{h,cc}` beside it.

    Args:
      name: the cc_library.
      proto_src: the .proto file (in this package).
      cc_proto_dep: the cc_proto_library target of the same file.
      deps: more cc deps.
      **kwargs: passed to the cc_library.
    """
    base = proto_src[:-len(".proto")]
    outs = [base + ".grpc.pb.h", base + ".grpc.pb.cc"]
    # Paths in Cuvil's tree: the execution root here, external/<name> in a
    # workspace that uses Cuvil.
    repository = native.repository_name().lstrip("@")
    root = "external/" + repository if repository else "."
    native.genrule(
        name = name + "_codegen",
        srcs = [proto_src],
        outs = outs,
        tools = [
            "@com_google_protobuf//:protoc",
            "@com_github_grpc_grpc//:grpc_cpp_plugin",
        ],
        cmd = ("$(location @com_google_protobuf//:protoc) -I%s " % root +
               "--plugin=protoc-gen-grpc=$(location @com_github_grpc_grpc//:grpc_cpp_plugin) " +
               "--grpc_out=$(GENDIR)/%s $(location %s)" % (root, proto_src)),
    )
    native.cc_library(
        name = name,
        srcs = [base + ".grpc.pb.cc"],
        hdrs = [base + ".grpc.pb.h"],
        deps = [cc_proto_dep, "@com_github_grpc_grpc//:grpc++"] + deps,
        **kwargs
    )
