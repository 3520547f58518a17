//===- cuvilc.cpp - the Cuvil compiler ------------------------------------===//

#include "tools/cuvilc/CuvilcMain.h"

int main(int argc, char **argv) { return cuvil::cuvilcMain(argc, argv); }
