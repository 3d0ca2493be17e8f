package dev.readygate.gpu;

/** Told about every GPU memory reading (metrics record them). */
@FunctionalInterface
public interface GpuMemoryListener {

    void read(GpuMemoryView view);
}
