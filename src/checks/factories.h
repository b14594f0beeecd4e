// Factories of the registered checks, one per check file. Private to src/checks.
#pragma once

#include <memory>

#include "tpudoctor/check/check.h"

namespace tpudoctor {

std::unique_ptr<Check> MakeCf001DataDependentControlFlow();
std::unique_ptr<Check> MakeMem001OverHbm();
std::unique_ptr<Check> MakeMem002LargeConstant();
std::unique_ptr<Check> MakePerf001TilePadding();
std::unique_ptr<Check> MakePerf002MxuUtilization();
std::unique_ptr<Check> MakePerf003BatchMultiple();
std::unique_ptr<Check> MakePipe001PythonInPipeline();
std::unique_ptr<Check> MakePipe002SequentialMap();
std::unique_ptr<Check> MakePipe003NoPrefetch();
std::unique_ptr<Check> MakePipe004PartialBatch();
std::unique_ptr<Check> MakePipe005SequentialInterleave();
std::unique_ptr<Check> MakePipe006SmallShuffle();
std::unique_ptr<Check> MakePipe007DataOutsideGcs();
std::unique_ptr<Check> MakeShp001DataDependentShape();
std::unique_ptr<Check> MakeShp002SymbolicDims();
std::unique_ptr<Check> MakeTpu001UnsupportedDtype();
std::unique_ptr<Check> MakeTpu002SlowDtype();
std::unique_ptr<Check> MakeTpu003UnsupportedOp();
std::unique_ptr<Check> MakeXla001PlatformCustomCall();
std::unique_ptr<Check> MakeXla002HostTransfer();
std::unique_ptr<Check> MakeXla003DynamicDims();

}  // namespace tpudoctor
