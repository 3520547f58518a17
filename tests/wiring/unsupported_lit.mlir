// Deliberately never runs (tagged manual): lit marks it UNSUPPORTED, and the
// runner must turn that into a failure instead of a silent skip.
// REQUIRES: a-feature-no-configuration-provides
// RUN: true
