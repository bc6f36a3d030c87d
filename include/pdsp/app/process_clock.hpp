#pragma once
// Wall time since this process started: what a scheduler's time limit counts.
namespace pdsp {
double seconds_since_process_start();
}
