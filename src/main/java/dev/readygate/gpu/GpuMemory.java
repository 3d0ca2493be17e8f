package dev.readygate.gpu;

import org.jspecify.annotations.Nullable;

/**
 * One GPU's framebuffer memory, in bytes, as a reader saw it.
 *
 * @param uuid the GPU's UUID ({@code GPU-...}), stable across reboots and index renumbering
 * @param index the GPU's index as the tool numbers it (not stable across containers)
 * @param name the product name (e.g. {@code NVIDIA H200}), empty when the tool did not say
 * @param totalBytes total framebuffer memory
 * @param usedBytes memory in use (by processes and the driver's contexts)
 * @param freeBytes memory free
 * @param reservedBytes memory the driver reserves, when the tool reports it
 */
public record GpuMemory(
        String uuid,
        int index,
        String name,
        long totalBytes,
        long usedBytes,
        long freeBytes,
        @Nullable Long reservedBytes) {

    public GpuMemory {
        if (uuid.isBlank()) {
            throw new IllegalArgumentException("uuid must not be blank");
        }
        if (totalBytes < 0 || usedBytes < 0 || freeBytes < 0 || (reservedBytes != null && reservedBytes < 0)) {
            throw new IllegalArgumentException("memory sizes must not be negative");
        }
    }
}
