#include "pdsp/optim/wolfe_line_search.hpp"

#include <algorithm>
#include <cmath>

namespace pdsp {
namespace {

// The minimiser of the quadratic through lo's value and slope and hi's value, kept inside the
// middle 80% of [lo, hi] so that the bracket shrinks; the midpoint when hi is not valid, the
// quadratic has no minimum there, or its minimum lies below the middle 80% (hi far above the
// quadratic's rise, as past a jump of phi: clamped steps would creep 10% of the bracket at a
// time towards it, bisection halves it).
double interpolate(const LinePoint& lo, const LinePoint& hi) {
  const double width = hi.step - lo.step;
  const double midpoint = lo.step + 0.5 * width;
  if (!hi.valid) return midpoint;
  const double curvature = hi.value - lo.value - lo.slope * width;
  if (!(curvature > 0)) return midpoint;
  const double step = lo.step - lo.slope * width * width / (2 * curvature);
  const double low = lo.step + 0.1 * width, high = lo.step + 0.9 * width;
  if ((step - low) * width < 0) return midpoint;
  return std::clamp(step, std::min(low, high), std::max(low, high));
}

class Search {
 public:
  Search(const std::function<LinePoint(double)>& phi, const LinePoint& start,
         const WolfeSettings& settings)
      : phi_(phi), start_(start), settings_(settings) {
    result_.best = start;
    result_.best.step = 0;
  }

  WolfeResult run(double initial_step) {
    LinePoint previous = result_.best;
    double step = initial_step;
    for (bool first = true; result_.trials < settings_.max_trials; first = false) {
      const LinePoint p = evaluate(step);
      if (!p.valid || !decreases(p) || (!first && p.value >= previous.value)) {
        zoom(previous, p);
        break;
      }
      if (flat(p)) {
        accept_wolfe(p);
        break;
      }
      if (p.slope >= 0) {
        zoom(p, previous);
        break;
      }
      previous = p;
      step = std::min(2 * step, settings_.max_step);
      if (step == previous.step) break;
    }
    return result_;
  }

 private:
  bool decreases(const LinePoint& p) const {
    return p.valid &&
           p.value <= start_.value + settings_.sufficient_decrease * p.step * start_.slope;
  }
  bool flat(const LinePoint& p) const {
    return std::abs(p.slope) <= settings_.curvature * std::abs(start_.slope);
  }

  LinePoint evaluate(double step) {
    LinePoint p = phi_(step);
    p.step = step;
    ++result_.trials;
    if (!p.valid || !std::isfinite(p.value) || !std::isfinite(p.slope)) {
      p.valid = false;
      ++result_.invalid_trials;
    } else if (decreases(p) && (!result_.decreased || p.value < result_.best.value)) {
      result_.best = p;
      result_.decreased = true;
    }
    return p;
  }

  void accept_wolfe(const LinePoint& p) {
    result_.best = p;
    result_.decreased = result_.strong_wolfe = true;
  }

  // lo: valid, sufficient decrease, the lowest value seen in the bracket; hi: the other end
  // (too high, not valid, or past a minimum).
  void zoom(LinePoint lo, LinePoint hi) {
    while (result_.trials < settings_.max_trials) {
      const double width = std::abs(hi.step - lo.step);
      if (width <= 1e-14 * std::max(1.0, std::abs(lo.step))) return;
      if (width <= settings_.bracket_tol * std::abs(lo.step)) return;
      if (!hi.valid &&
          std::abs(lo.slope) * width < settings_.negligible_gain * (start_.value - lo.value))
        return;
      const LinePoint p = evaluate(interpolate(lo, hi));
      if (!p.valid || !decreases(p) || p.value >= lo.value) {
        hi = p;
        continue;
      }
      if (flat(p)) {
        accept_wolfe(p);
        return;
      }
      if (p.slope * (hi.step - lo.step) >= 0) hi = lo;
      lo = p;
    }
  }

  const std::function<LinePoint(double)>& phi_;
  const LinePoint start_;
  const WolfeSettings& settings_;
  WolfeResult result_;
};

}  // namespace

WolfeResult strong_wolfe_search(const std::function<LinePoint(double)>& phi, const LinePoint& start,
                                double initial_step, const WolfeSettings& settings) {
  return Search(phi, start, settings).run(initial_step);
}

}  // namespace pdsp
