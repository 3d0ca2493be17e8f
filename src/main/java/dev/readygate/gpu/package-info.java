/**
 * GPU memory readers: what {@code nvidia-smi} (CSV queries and {@code -q -x} XML) and the DCGM exporter say about each
 * GPU's framebuffer memory and the processes holding it, and who those processes are (engine, preload daemon, other).
 * Readers only: they turn tool output into {@link dev.readygate.gpu.GpuReading}s and never throw for a tool's failure.
 */
@NullMarked
package dev.readygate.gpu;

import org.jspecify.annotations.NullMarked;
