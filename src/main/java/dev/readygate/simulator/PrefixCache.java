package dev.readygate.simulator;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * vLLM's automatic prefix caching, at block granularity: a prompt whose leading full blocks were seen before skips
 * their prefill. Bounded like the KV cache it lives in (least recently used blocks are evicted).
 */
final class PrefixCache {

    static final int BLOCK_SIZE = 16;

    private final Map<Long, Boolean> blocks;

    PrefixCache(int kvCacheSizeTokens) {
        int capacity = Math.max(1, kvCacheSizeTokens / BLOCK_SIZE);
        this.blocks = new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
                return size() > capacity;
            }
        };
    }

    /** Returns how many leading prompt tokens were cached, and caches every full block of this prompt. */
    synchronized int lookupAndInsert(List<Integer> prompt) {
        long chain = 0x84222325CBF29CE4L;
        int cached = 0;
        boolean hitting = true;
        for (int end = BLOCK_SIZE; end <= prompt.size(); end += BLOCK_SIZE) {
            for (int i = end - BLOCK_SIZE; i < end; i++) {
                chain = (chain ^ prompt.get(i)) * 0x100000001B3L;
            }
            if (hitting && blocks.get(chain) != null) {
                cached = end;
            } else {
                hitting = false;
                blocks.put(chain, Boolean.TRUE);
            }
        }
        return cached;
    }
}
