// Price: what a step, an epoch and an hour of the slice cost.
#include "src/cost/step.h"

namespace tpudoctor {
// Phase 6: what the step costs.
void Prices(const StepContext& c, Estimate& e) {
  const std::optional<double> price =
      c.options.usd_per_chip_hour ? c.options.usd_per_chip_hour : c.target.price_usd_per_chip_hour;
  if (price) {
    e.usd_per_hour = *price * c.options.chips * c.options.slices;
    if (e.samples_per_s > 0)
      e.usd_per_million_samples = *e.usd_per_hour / (e.samples_per_s * 3600) * 1e6;
  }
  if (c.options.dataset_size && e.samples_per_s > 0) {
    e.epoch_s = *c.options.dataset_size / e.samples_per_s;
    if (e.usd_per_hour) e.usd_per_epoch = *e.usd_per_hour * *e.epoch_s / 3600;
  }
}

}  // namespace tpudoctor
