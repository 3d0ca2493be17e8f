/**
 * A vLLM 0.31 engine simulator faithful to what readygate can observe: HTTP surface, metrics, log lines, the preload
 * weight-cache daemon, snapshot artifacts, restart paths and faults. Isolated: no gateway code imports it except the
 * demo profile.
 */
@NullMarked
package dev.readygate.simulator;

import org.jspecify.annotations.NullMarked;
