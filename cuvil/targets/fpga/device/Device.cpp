//===- Device.cpp - device files ------------------------------------------===//

#include "cuvil/targets/fpga/device/Device.h"

#include "cuvil/targets/fpga/device/EmbeddedDevices.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

namespace cuvil::fpga {

namespace {

/// Reads the fields of one device file, remembering the first problem.
class Reader {
public:
  explicit Reader(llvm::StringRef fileName) : fileName(fileName.str()) {}

  const llvm::json::Object *object(const llvm::json::Object &parent,
                                   llvm::StringRef key, bool required) {
    const llvm::json::Object *value = parent.getObject(key);
    if (!value && required)
      fail(key, "an object");
    return value;
  }
  std::string string(const llvm::json::Object &parent, llvm::StringRef key) {
    std::optional<llvm::StringRef> value = parent.getString(key);
    if (!value) {
      fail(key, "a string");
      return "";
    }
    return value->str();
  }
  int64_t integer(const llvm::json::Object &parent, llvm::StringRef key,
                  bool required = true) {
    std::optional<int64_t> value = parent.getInteger(key);
    if (!value) {
      if (required || parent.get(key))
        fail(key, "a non-negative integer");
      return 0;
    }
    if (*value < 0)
      fail(key, "a non-negative integer");
    return *value;
  }
  double number(const llvm::json::Object &parent, llvm::StringRef key) {
    std::optional<double> value = parent.getNumber(key);
    if (!value || *value <= 0) {
      fail(key, "a positive number");
      return 1;
    }
    return *value;
  }
  void fail(llvm::StringRef key, llvm::StringRef what) {
    if (status.ok())
      status = absl::InvalidArgumentError(absl::StrCat(
          "device file ", fileName, ": '", key.str(), "' must be ", what.str()));
  }
  absl::Status status;

private:
  std::string fileName;
};

} // namespace

absl::StatusOr<Device> parseDevice(llvm::StringRef json,
                                   llvm::StringRef fileName) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed)
    return absl::InvalidArgumentError(
        absl::StrCat("device file ", fileName.str(), " is not JSON: ",
                     llvm::toString(parsed.takeError())));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return absl::InvalidArgumentError(
        absl::StrCat("device file ", fileName.str(), " is not an object"));
  Reader read(fileName);
  Device device;
  device.name = read.string(*root, "name");
  device.part = read.string(*root, "part");
  device.vendor = read.string(*root, "vendor");
  device.family = read.string(*root, "family");
  device.flow = read.string(*root, "flow");
  if (const llvm::json::Object *budget = read.object(*root, "budget", true)) {
    bool intel = device.vendor == "intel";
    device.lut = read.integer(*budget, "lut", !intel);
    device.alm = read.integer(*budget, "alm", intel);
    device.ff = read.integer(*budget, "ff");
    device.dsp = read.integer(*budget, "dsp");
    device.bram18k = read.integer(*budget, "bram_18k", !intel);
    device.uram = read.integer(*budget, "uram", false);
    device.m20k = read.integer(*budget, "m20k", intel);
  }
  if (const llvm::json::Object *mult = read.object(*root, "multiplier", true)) {
    device.multiplierBlock = read.string(*mult, "block");
    device.multiplierABits = read.integer(*mult, "a_bits");
    device.multiplierBBits = read.integer(*mult, "b_bits");
    device.multiplierLatency = read.integer(*mult, "latency_cycles");
  }
  if (const llvm::json::Object *memory = read.object(*root, "memory", true)) {
    bool intel = device.vendor == "intel";
    device.bramBits = read.integer(*memory, intel ? "m20k_bits" : "bram_bits");
    device.bramMaxWidth =
        read.integer(*memory, intel ? "m20k_max_width" : "bram_max_width");
    device.uramBits = read.integer(*memory, "uram_bits", false);
    device.uramWidth = read.integer(*memory, "uram_width", false);
    device.lutramMaxDepth = read.integer(*memory, "lutram_max_depth");
  }
  if (const llvm::json::Object *timing = read.object(*root, "timing", true)) {
    device.clockNs = read.number(*timing, "clock_ns");
    device.logicLevelNs = read.number(*timing, "logic_level_ns");
    device.carryNsPerBit = read.number(*timing, "carry_ns_per_bit");
  }
  if (const llvm::json::Array *sources = root->getArray("sources"))
    for (const llvm::json::Value &source : *sources)
      if (std::optional<llvm::StringRef> text = source.getAsString())
        device.sources.push_back(text->str());
  if (device.sources.empty())
    read.fail("sources", "a list of the documents the figures come from");
  if (std::optional<llvm::StringRef> text = root->getString("budget_source"))
    device.budgetSource = text->str();
  if (const llvm::json::Object *vendor = root->getObject("vendor_figures")) {
    std::vector<std::string> parts;
    for (const auto &[key, value] : *vendor)
      if (std::optional<int64_t> count = value.getAsInteger())
        parts.push_back(absl::StrCat(key.str(), " ", *count));
    std::sort(parts.begin(), parts.end());
    device.vendorFigures = absl::StrJoin(parts, ", ");
    if (std::optional<llvm::StringRef> note = vendor->getString("note"))
      absl::StrAppend(&device.vendorFigures, " (", note->str(), ")");
  }
  if (read.status.ok() && device.vendor != "xilinx" && device.vendor != "intel")
    read.fail("vendor", "\"xilinx\" or \"intel\"");
  if (read.status.ok() && device.flow != "vitis" && device.flow != "oneapi")
    read.fail("flow", "\"vitis\" or \"oneapi\"");
  if (read.status.ok() && (device.multiplierABits < 2 || device.multiplierBBits < 2))
    read.fail("multiplier", "at least 2 x 2 bits");
  if (!read.status.ok())
    return read.status;
  return device;
}

const std::vector<Device> &getDevices() {
  static const std::vector<Device> *devices = [] {
    auto *list = new std::vector<Device>();
    for (const EmbeddedDeviceFile *file = kDeviceFiles; file->name; ++file) {
      absl::StatusOr<Device> device = parseDevice(file->contents, file->name);
      // The files are checked by the device test; a bad one is a build bug.
      if (device.ok())
        list->push_back(*std::move(device));
    }
    std::sort(list->begin(), list->end(),
              [](const Device &a, const Device &b) { return a.name < b.name; });
    return list;
  }();
  return *devices;
}

absl::StatusOr<Device> lookupDevice(llvm::StringRef name) {
  std::vector<std::string> names;
  for (const Device &device : getDevices()) {
    if (name.equals_insensitive(device.name) ||
        name.equals_insensitive(device.part))
      return device;
    names.push_back(device.name);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown FPGA device '", name.str(), "'; this build knows: ",
      absl::StrJoin(names, ", "), " (cuvilc --list-devices describes them)"));
}

std::string describeDevices() {
  std::string text = absl::StrFormat(
      "%-10s %-26s %-26s %9s %9s %6s %9s %6s %6s  %s\n", "device", "part",
      "family", "LUT/ALM", "FF", "DSP", "memory", "URAM", "clock", "HLS flow");
  for (const Device &device : getDevices()) {
    std::string logic = device.isIntel() ? absl::StrCat(device.alm, " ALM")
                                         : absl::StrCat(device.lut);
    std::string memory =
        absl::StrCat(device.memoryBlocks(), device.isIntel() ? " M20K" : "");
    absl::StrAppendFormat(
        &text, "%-10s %-26s %-26s %9s %9d %6d %9s %6d %4.1fns  %s\n",
        device.name, device.part, device.family, logic, device.ff, device.dsp,
        memory, device.uram, device.clockNs,
        device.flow == "vitis" ? "Vitis HLS" : "oneAPI");
  }
  text += "\nMemory is in 18 Kb block RAMs (M20K on Intel parts). Each "
          "device file cites its sources\n(cuvil/targets/fpga/devices).\n";
  return text;
}

} // namespace cuvil::fpga
