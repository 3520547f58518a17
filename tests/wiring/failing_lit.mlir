// Deliberately failing (tagged manual): tests/test_wiring.py runs it through
// scripts/test to show that a failing lit test turns the run red.
// RUN: echo "actual output" | FileCheck %s
// CHECK: expected output that is not there
