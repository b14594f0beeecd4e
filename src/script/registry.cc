// The one list of script rules. Keep it sorted by code.
#include "src/script/rules/factories.h"

namespace tpudoctor::script {

const std::vector<std::unique_ptr<ScriptRule>>& AllScriptRules() {
  static const auto* rules = [] {
    auto* v = new std::vector<std::unique_ptr<ScriptRule>>();
    v->push_back(MakeJob009XmpSpawnNprocs());
    v->push_back(MakeMem002LargeConstant());
    v->push_back(MakePipe001PythonInPipeline());
    v->push_back(MakePipe002SequentialMap());
    v->push_back(MakePipe003NoPrefetch());
    v->push_back(MakePipe004PartialBatch());
    v->push_back(MakePipe005SequentialInterleave());
    v->push_back(MakePipe006SmallShuffle());
    v->push_back(MakePipe007DataOutsideGcs());
    v->push_back(MakePy001HostSyncInStep());
    v->push_back(MakePy002NoStepBarrier());
    v->push_back(MakePy003FsdpOptimizerStep());
    v->push_back(MakePy004JitInLoop());
    v->push_back(MakePy005TracedControlFlow());
    v->push_back(MakePy006OutsideStrategyScope());
    v->push_back(MakePy007StrategyRunEager());
    v->push_back(MakePy008DynamicPadding());
    v->push_back(MakePy009Float64Dataset());
    v->push_back(MakeShp001DataDependentShape());
    v->push_back(MakeTpu002SlowDtype());
    v->push_back(MakeTpu003UnsupportedOp());
    v->push_back(MakeXla002HostCallback());
    return v;
  }();
  return *rules;
}

}  // namespace tpudoctor::script
