// Factories of the script rules, one per file in this folder. Private to src/script.
#pragma once

#include <memory>

#include "src/script/rule.h"

namespace tpudoctor::script {

std::unique_ptr<ScriptRule> MakeJob009XmpSpawnNprocs();
std::unique_ptr<ScriptRule> MakeMem002LargeConstant();
std::unique_ptr<ScriptRule> MakePipe001PythonInPipeline();
std::unique_ptr<ScriptRule> MakePipe002SequentialMap();
std::unique_ptr<ScriptRule> MakePipe003NoPrefetch();
std::unique_ptr<ScriptRule> MakePipe004PartialBatch();
std::unique_ptr<ScriptRule> MakePipe005SequentialInterleave();
std::unique_ptr<ScriptRule> MakePipe006SmallShuffle();
std::unique_ptr<ScriptRule> MakePipe007DataOutsideGcs();
std::unique_ptr<ScriptRule> MakePy001HostSyncInStep();
std::unique_ptr<ScriptRule> MakePy002NoStepBarrier();
std::unique_ptr<ScriptRule> MakePy003FsdpOptimizerStep();
std::unique_ptr<ScriptRule> MakePy004JitInLoop();
std::unique_ptr<ScriptRule> MakePy005TracedControlFlow();
std::unique_ptr<ScriptRule> MakePy006OutsideStrategyScope();
std::unique_ptr<ScriptRule> MakePy007StrategyRunEager();
std::unique_ptr<ScriptRule> MakePy008DynamicPadding();
std::unique_ptr<ScriptRule> MakePy009Float64Dataset();
std::unique_ptr<ScriptRule> MakeShp001DataDependentShape();
std::unique_ptr<ScriptRule> MakeTpu002SlowDtype();
std::unique_ptr<ScriptRule> MakeTpu003UnsupportedOp();
std::unique_ptr<ScriptRule> MakeXla002HostCallback();

}  // namespace tpudoctor::script
