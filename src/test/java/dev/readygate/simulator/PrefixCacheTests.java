package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class PrefixCacheTests {

    private static List<Integer> tokens(int from, int count) {
        return IntStream.range(from, from + count).boxed().toList();
    }

    @Test
    void lookupWhenPromptWasSeenReturnsItsFullBlocks() {
        PrefixCache cache = new PrefixCache(65536);
        assertThat(cache.lookupAndInsert(tokens(0, 100))).isZero();
        assertThat(cache.lookupAndInsert(tokens(0, 100))).isEqualTo(96);
    }

    @Test
    void lookupWhenOnlyThePrefixIsSharedCountsTheSharedBlocks() {
        PrefixCache cache = new PrefixCache(65536);
        cache.lookupAndInsert(tokens(0, 64));
        List<Integer> varied = new java.util.ArrayList<>(tokens(0, 64));
        varied.set(40, -1);
        assertThat(cache.lookupAndInsert(varied)).isEqualTo(32);
    }

    @Test
    void cacheIsBoundedByTheKvCache() {
        PrefixCache cache = new PrefixCache(64);
        cache.lookupAndInsert(tokens(0, 64));
        cache.lookupAndInsert(tokens(1000, 64));
        assertThat(cache.lookupAndInsert(tokens(0, 64))).isZero();
    }
}
