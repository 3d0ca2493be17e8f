package dev.readygate.gpu;

/**
 * A process holding memory on a GPU, as the driver charges it. Memory mapped from another process through CUDA IPC is
 * charged to the process that allocated it, not to the one that maps it.
 *
 * @param pid the process id in the namespace of the tool that listed it (the host's, for nvidia-smi)
 * @param processName the name the tool reported (often the executable path, or a process title such as
 *     {@code VLLM::EngineCore})
 * @param gpuUuid the UUID of the GPU the memory is on
 * @param usedBytes the memory charged to the process on that GPU
 */
record GpuProcess(int pid, String processName, String gpuUuid, long usedBytes) {

    public GpuProcess {
        if (usedBytes < 0) {
            throw new IllegalArgumentException("usedBytes must not be negative, was " + usedBytes);
        }
    }
}
