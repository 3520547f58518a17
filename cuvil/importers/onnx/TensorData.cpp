//===- TensorData.cpp - ONNX tensors' bytes: inline, raw or external ------===//
//
// Initializers and Constant values as host bytes: sizes checked before
// anything is read, external data resolved inside the model's folder, and
// decoding into HostTensor for the values shape math needs.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

namespace cuvil::onnx_import {

LogicalResult Importer::checkTensorSize(Location loc, Type type,
                                        const Twine &what) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || getStaticTensorBytes(shaped))
    return success();
  return emitError(loc) << what << " has shape "
                        << shapeString(shaped.getShape()) << " of "
                        << shaped.getElementType()
                        << " elements, which needs more than 2^63 bytes; "
                           "check the model's dimensions (or --input-shape)";
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

ValueEntry *Importer::lookup(const std::string &name) {
  auto it = values.find(name);
  if (it == values.end())
    return nullptr;
  ValueEntry &entry = it->second;
  if (!entry.value && !entry.host && !entry.initializer && !entry.batchZeros)
    return nullptr;
  return &entry;
}

LogicalResult Importer::readTensorBytes(const onnx::TensorProto &tensor,
                                        std::string &bytes) {
  Location loc = currentLoc.value_or(
      FileLineColLoc::get(&context, options.modelPath, 0, 0));
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const onnx::StringStringEntryProto &kv : tensor.external_data()) {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset" || kv.key() == "length") {
        int64_t v = 0;
        if (StringRef(kv.value()).getAsInteger(10, v) || v < 0)
          return emitError(loc) << "tensor '" << tensor.name() << "' has a bad "
                                << kv.key() << " '" << kv.value() << "'";
        (kv.key() == "offset" ? offset : length) = v;
      }
    }
    FailureOr<std::string> file = readExternalFile(tensor, location, loc);
    if (failed(file))
      return failure();
    if (offset > static_cast<int64_t>(file->size()) ||
        (length >= 0 && length > static_cast<int64_t>(file->size()) - offset))
      return emitError(loc) << "tensor '" << tensor.name() << "' reads bytes ["
                            << offset << ", " << offset + length << ") of '"
                            << location << "', which has " << file->size();
    bytes = file->substr(offset, length < 0 ? std::string::npos : length);
    return success();
  }
  if (tensor.has_raw_data()) {
    bytes = tensor.raw_data();
    return success();
  }
  // Typed fields: re-encode as little-endian bytes of the element type.
  bytes.clear();
  auto append = [&](auto value) {
    char buffer[sizeof(value)];
    std::memcpy(buffer, &value, sizeof(value));
    bytes.append(buffer, sizeof(value));
  };
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    for (float v : tensor.float_data())
      append(v);
    break;
  case onnx::TensorProto::DOUBLE:
    for (double v : tensor.double_data())
      append(v);
    break;
  case onnx::TensorProto::INT64:
    for (int64_t v : tensor.int64_data())
      append(v);
    break;
  case onnx::TensorProto::INT32:
    for (int32_t v : tensor.int32_data())
      append(v);
    break;
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    for (int32_t v : tensor.int32_data())
      append(static_cast<uint16_t>(v));
    break;
  // ONNX keeps uint32 and uint64 in uint64_data.
  case onnx::TensorProto::UINT32:
    for (uint64_t v : tensor.uint64_data())
      append(static_cast<uint32_t>(v));
    break;
  case onnx::TensorProto::UINT64:
    for (uint64_t v : tensor.uint64_data())
      append(v);
    break;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    for (int32_t v : tensor.int32_data())
      append(static_cast<uint8_t>(v));
    break;
  default:
    return emitError(loc) << "tensor '" << tensor.name() << "' has "
                          << onnxTypeName(tensor.data_type())
                          << ", which Cuvil does not support";
  }
  return success();
}

FailureOr<std::string>
Importer::readExternalFile(const onnx::TensorProto &tensor,
                           const std::string &location, Location loc) {
  auto refuse = [&](StringRef why) {
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has external data at '" << location
                          << "', which " << why
                          << "; external data must be a file in the model's "
                             "folder";
  };
  if (location.empty() || location.front() == '/' ||
      llvm::any_of(location, [](char c) {
        return static_cast<unsigned char>(c) < 0x20;
      }))
    return refuse("is empty, absolute or holds control characters");
  // Symbolic links are followed to where they lead: that must still be
  // inside the model's folder, and a regular file (not a FIFO or a device,
  // which would hang or never end).
  char dirReal[PATH_MAX], fileReal[PATH_MAX];
  std::string path = options.externalDataDir + "/" + location;
  if (!::realpath(options.externalDataDir.c_str(), dirReal))
    return refuse(absl::StrCat("cannot be resolved (", std::strerror(errno),
                               ")"));
  if (!::realpath(path.c_str(), fileReal))
    return refuse(absl::StrCat("cannot be opened (", std::strerror(errno),
                               ")"));
  std::string dir = dirReal, real = fileReal;
  std::string prefix = dir == "/" ? dir : dir + "/";
  if (real.size() <= prefix.size() || real.compare(0, prefix.size(), prefix))
    return refuse(absl::StrCat("resolves to ", real,
                               ", outside the model's folder ", dir));
  struct stat st;
  if (::stat(fileReal, &st) != 0 || !S_ISREG(st.st_mode))
    return refuse("is not a regular file");
  absl::StatusOr<std::string> contents = readFile(real);
  if (!contents.ok())
    return emitError(loc) << "tensor '" << tensor.name()
                          << "': " << std::string(contents.status().message());
  return *std::move(contents);
}

FailureOr<HostTensor> Importer::decodeTensor(const onnx::TensorProto &tensor,
                                             bool full, std::string &bytes) {
  Location loc = currentLoc.value_or(
      FileLineColLoc::get(&context, options.modelPath, 0, 0));
  HostTensor host;
  host.elementType = toMlirType(&context, tensor.data_type());
  int64_t elementBytes = onnxElementBytes(tensor.data_type());
  if (!host.elementType || !elementBytes)
    return emitError(loc) << "tensor '" << tensor.name() << "' has "
                          << onnxTypeName(tensor.data_type())
                          << ", which Cuvil does not support";
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0 || (d > 0 && count > std::numeric_limits<int64_t>::max() / d /
                                       elementBytes))
      return emitError(loc)
             << "tensor '" << tensor.name() << "' has a bad shape "
             << shapeString(SmallVector<int64_t>(tensor.dims().begin(),
                                                 tensor.dims().end()));
    host.shape.push_back(d);
    count *= d;
  }
  if (failed(readTensorBytes(tensor, bytes)))
    return failure();
  if (static_cast<int64_t>(bytes.size()) != count * elementBytes)
    return emitError(loc) << "tensor '" << tensor.name() << "' holds "
                          << bytes.size() << " bytes but its shape "
                          << shapeString(host.shape) << " of "
                          << onnxTypeName(tensor.data_type()) << " needs "
                          << count * elementBytes;
  if (!full || count > kMaxHostElements)
    return host;
  const char *data = bytes.data();
  for (int64_t i = 0; i < count; ++i, data += elementBytes) {
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      host.floats.push_back(readAs<float>(data));
      break;
    case onnx::TensorProto::DOUBLE:
      host.floats.push_back(readAs<double>(data));
      break;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      host.floats.push_back(
          APFloat(tensor.data_type() == onnx::TensorProto::FLOAT16
                      ? APFloat::IEEEhalf()
                      : APFloat::BFloat(),
                  APInt(16, readAs<uint16_t>(data)))
              .convertToDouble());
      break;
    case onnx::TensorProto::INT64:
      host.ints.push_back(readAs<int64_t>(data));
      break;
    case onnx::TensorProto::INT32:
      host.ints.push_back(readAs<int32_t>(data));
      break;
    case onnx::TensorProto::INT16:
      host.ints.push_back(readAs<int16_t>(data));
      break;
    case onnx::TensorProto::INT8:
      host.ints.push_back(readAs<int8_t>(data));
      break;
    case onnx::TensorProto::UINT16:
      host.ints.push_back(readAs<uint16_t>(data));
      break;
    case onnx::TensorProto::UINT32:
      host.ints.push_back(readAs<uint32_t>(data));
      break;
    case onnx::TensorProto::UINT64:
      // Shape arithmetic reads them as int64; values past 2^63 wrap.
      host.ints.push_back(static_cast<int64_t>(readAs<uint64_t>(data)));
      break;
    default: // UINT8, BOOL
      host.ints.push_back(readAs<uint8_t>(data));
      break;
    }
  }
  return host;
}

} // namespace cuvil::onnx_import
