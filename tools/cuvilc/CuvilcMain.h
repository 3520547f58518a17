//===- CuvilcMain.h - the cuvilc command line as a function -----*- C++ -*-===//

#ifndef CUVIL_TOOLS_CUVILC_CUVILCMAIN_H
#define CUVIL_TOOLS_CUVILC_CUVILCMAIN_H

namespace cuvil {

/// Runs cuvilc with `argv` (argv[0] is the program name) and returns its
/// exit status. Parses global Abseil flags: call it once per process.
int cuvilcMain(int argc, char **argv);

} // namespace cuvil

#endif // CUVIL_TOOLS_CUVILC_CUVILCMAIN_H
