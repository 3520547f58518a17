#include "cuvil/targets/fpga/device/Device.h"

#include "gtest/gtest.h"

namespace cuvil::fpga {
namespace {

TEST(DeviceTest, EveryDeviceFileParses) {
  // The issue's three parts and the U250 of hls4ml's tutorial.
  ASSERT_EQ(getDevices().size(), 4u);
  for (const char *name : {"agf014", "xcu250", "xcvm1802", "xczu9eg"})
    EXPECT_TRUE(lookupDevice(name).ok()) << name;
}

TEST(DeviceTest, Zu9egHasTheDataSheetFigures) {
  absl::StatusOr<Device> device = lookupDevice("XCZU9EG");
  ASSERT_TRUE(device.ok());
  EXPECT_EQ(device->lut, 274080);
  EXPECT_EQ(device->ff, 548160);
  EXPECT_EQ(device->dsp, 2520);
  EXPECT_EQ(device->bram18k, 1824);
  EXPECT_EQ(device->uram, 0);
  EXPECT_EQ(device->multiplierABits, 27);
  EXPECT_EQ(device->multiplierBBits, 18);
  EXPECT_EQ(device->flow, "vitis");
  EXPECT_FALSE(device->sources.empty());
}

TEST(DeviceTest, ProductSpecBudgetsKeepTheVendorFiguresBeside) {
  absl::StatusOr<Device> versal = lookupDevice("xcvm1802");
  ASSERT_TRUE(versal.ok());
  EXPECT_EQ(versal->lut, 2100000);
  EXPECT_EQ(versal->dsp, 7680);
  EXPECT_NE(versal->vendorFigures.find("lut 899840"), std::string::npos);
  absl::StatusOr<Device> agilex = lookupDevice("agf014");
  ASSERT_TRUE(agilex.ok());
  EXPECT_TRUE(agilex->isIntel());
  EXPECT_EQ(agilex->alm, 1400000);
  EXPECT_EQ(agilex->logicLuts(), 2800000);
  EXPECT_EQ(agilex->dsp, 5920);
  EXPECT_EQ(agilex->flow, "oneapi");
  EXPECT_STREQ(agilex->memoryBlockName(), "M20K");
}

TEST(DeviceTest, UnknownDeviceListsTheKnownOnes) {
  absl::StatusOr<Device> device = lookupDevice("xc7a35t");
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.status().message().find("xc7a35t"), std::string::npos);
  EXPECT_NE(device.status().message().find("xczu9eg"), std::string::npos);
  EXPECT_NE(device.status().message().find("--list-devices"),
            std::string::npos);
}

TEST(DeviceTest, BadFilesNameTheField) {
  EXPECT_NE(parseDevice("{", "x.json").status().message().find("not JSON"),
            std::string::npos);
  absl::StatusOr<Device> missing = parseDevice(
      R"({"name": "d", "part": "p", "vendor": "xilinx", "family": "f",
          "flow": "vitis", "budget": {"lut": 1, "ff": 1, "dsp": -1,
          "bram_18k": 1}})",
      "d.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("d.json: 'dsp'"),
            std::string::npos)
      << missing.status().message();
}

TEST(DeviceTest, ListingShowsEveryDevice) {
  std::string text = describeDevices();
  for (const Device &device : getDevices())
    EXPECT_NE(text.find(device.part), std::string::npos) << device.name;
}

} // namespace
} // namespace cuvil::fpga
