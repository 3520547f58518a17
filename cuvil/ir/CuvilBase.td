//===- CuvilBase.td - level1 dialect definition ------------*- tablegen -*-===//
//
// level1 of Cuvil's IR: value semantics on tensors, ops close to what models
// say. Every op verifies and infers its result types; a bad model fails here
// with the op and the source location from the importer.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IR_CUVILBASE_TD
#define CUVIL_IR_CUVILBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Cuvil_Dialect : Dialect {
  let name = "cuvil";
  let cppNamespace = "::cuvil::l1";
  let summary = "Cuvil level1: tensor-level model graphs";
  let description = [{
    Tensor ops with value semantics, as produced by Cuvil's importers (ONNX,
    PyTorch capture). Shapes may carry dynamic dimensions (a dynamic batch);
    element types are explicit and never promoted implicitly: importers insert
    `cuvil.cast` where a framework would promote.
  }];
  // Quantized tensors are of upstream `!quant.uniform` types.
  let dependentDialects = ["::mlir::quant::QuantDialect"];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Cuvil_Op<string mnemonic, list<Trait> traits = []>
    : Op<Cuvil_Dialect, mnemonic, traits>;

// Like upstream's InferTypeOpAdaptor, but inherent attributes that arrive in
// the attribute dictionary are merged into the properties first: a parser
// infers result types before attr-dict entries become properties, and
// upstream's adaptor would then miss them (e.g. `{trans_b}` ignored), and
// default-valued attributes would still be unset.
def Cuvil_InferTypeOpAdaptor : TraitList<[
  DeclareOpInterfaceMethods<InferTypeOpInterface>,
  NativeOpTrait<"InferTypeOpAdaptor", [], [{
    static ::llvm::LogicalResult
    inferReturnTypes(::mlir::MLIRContext *context,
                     std::optional<::mlir::Location> location, Adaptor adaptor,
                     ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes);
  }], [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr attributes,
        ::mlir::OpaqueProperties properties, ::mlir::RegionRange regions,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
      Properties merged;
      if (properties)
        merged = *properties.as<Properties *>();
      if constexpr (!std::is_same_v<Properties, ::mlir::EmptyProperties>) {
        if (attributes &&
            ::mlir::failed(setPropertiesFromAttr(merged, attributes, [&] {
              return ::mlir::emitError(
                  location ? *location : ::mlir::UnknownLoc::get(context));
            })))
          return ::mlir::failure();
        // Defaults are filled in when the op is created, after inference.
        populateDefaultProperties(
            ::mlir::OperationName(getOperationName(), context), merged);
      }
      $cppClass::Adaptor adaptor(operands, attributes, merged, regions);
      // A required attribute missing (or of the wrong kind) is an error
      // here, before inference reads it: the parser infers first.
      if (::mlir::failed(adaptor.verify(
              location ? *location : ::mlir::UnknownLoc::get(context))))
        return ::mlir::failure();
      return $cppClass::inferReturnTypes(context, location, adaptor,
                                         inferredReturnTypes);
    }
  }]>
]>;

// Element types level1 computes on.
def Cuvil_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def Cuvil_Int : AnyTypeOf<[I1, I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;
def Cuvil_Tensor : RankedTensorOf<[Cuvil_Float, Cuvil_Int]>;
def Cuvil_FloatTensor : RankedTensorOf<[Cuvil_Float]>;
def Cuvil_IndexTensor : RankedTensorOf<[I32, I64]>;

#endif // CUVIL_IR_CUVILBASE_TD
