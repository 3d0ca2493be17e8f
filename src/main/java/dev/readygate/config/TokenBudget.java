package dev.readygate.config;

import java.math.BigDecimal;
import java.math.BigInteger;
import org.jspecify.annotations.Nullable;

/**
 * A prompt length: an absolute token count ({@code 512}) or a fraction of the engine's {@code max_model_len}
 * ({@code 0.25}), known only once the engine lists its model.
 *
 * @param count the absolute count, or null
 * @param fraction the fraction of {@code max_model_len}, or null
 */
public record TokenBudget(@Nullable Integer count, @Nullable Double fraction) {

    public TokenBudget {
        if ((count == null) == (fraction == null)) {
            throw new IllegalArgumentException("a token budget is either a count or a fraction");
        }
        if (count != null && count < 1) {
            throw new IllegalArgumentException("a token count must be at least 1 (was " + count + ")");
        }
        if (fraction != null && !(fraction > 0 && fraction < 1)) {
            throw new IllegalArgumentException(
                    "a fraction of max_model_len must be between 0 and 1 (was " + fraction + ")");
        }
    }

    /**
     * A number as YAML gives it: a whole number ({@code prompt-tokens: 2048}, an Integer) is a count, one with a
     * fraction ({@code 0.25}, a Double) a fraction of {@code max_model_len}.
     */
    public static TokenBudget of(Number number) {
        if (number instanceof Double || number instanceof Float || number instanceof BigDecimal) {
            return new TokenBudget(null, number.doubleValue());
        }
        BigInteger count = new BigInteger(number.toString());
        if (count.compareTo(BigInteger.valueOf(Integer.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException(
                    "a token count must be at most " + Integer.MAX_VALUE + " (was " + number + ")");
        }
        return new TokenBudget(count.max(BigInteger.valueOf(Integer.MIN_VALUE)).intValue(), null);
    }

    /** Parses {@code 512} (a count) or {@code 0.25} / {@code 25%} (a fraction). */
    public static TokenBudget parse(String text) {
        String value = text.strip();
        try {
            if (value.endsWith("%")) {
                return new TokenBudget(null, Double.parseDouble(value.substring(0, value.length() - 1)) / 100);
            }
            if (value.contains(".")) {
                return new TokenBudget(null, Double.parseDouble(value));
            }
            return new TokenBudget(Integer.parseInt(value), null);
        } catch (NumberFormatException ex) {
            throw new IllegalArgumentException("not a token count or a fraction of max_model_len (was " + text + ")");
        }
    }

    /** The count for an engine with this {@code max_model_len} (null when unknown); null if it cannot be known. */
    public @Nullable Integer resolve(@Nullable Integer maxModelLen) {
        if (count != null) {
            return count;
        }
        if (maxModelLen == null || fraction == null) {
            return null;
        }
        return Math.max(1, (int) Math.floor(maxModelLen * fraction));
    }

    @Override
    public String toString() {
        return count != null ? String.valueOf(count) : fraction + " of max_model_len";
    }
}
