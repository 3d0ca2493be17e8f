package dev.readygate.engine;

import dev.readygate.secret.SecretRedaction;
import java.util.Collection;
import java.util.regex.Pattern;

/**
 * Turns text from the engine (an error message) into a short, one-line detail that is safe to log and show: secrets
 * the call knows of (the prompt, the API key), echoed request values and whatever {@link SecretRedaction} calls a
 * secret are redacted, and the length is capped.
 */
public final class SafeDetail {

    /** Roughly what fits a log line and a {@code /status} cell. */
    static final int MAX_LENGTH = 200;

    static final String REDACTED = "<redacted>";

    /**
     * Shorter secrets are not redacted: replacing every "a" or "is" would wreck the message while hiding nothing a
     * reader could use.
     */
    private static final int MIN_SECRET_LENGTH = 4;

    /** Pydantic validation errors (vLLM's 400s) echo the offending input, which may be the prompt. */
    private static final Pattern ECHOED_INPUT =
            Pattern.compile("input_value=.*?(?=, input_type=|]|$)", Pattern.DOTALL | Pattern.MULTILINE);

    private static final Pattern CONTROL_OR_SPACE_RUN = Pattern.compile("[\\s\\p{Cntrl}]+");

    private SafeDetail() {}

    /** {@code raw} made safe: {@code secrets} (those of four characters or more) and echoed input redacted, capped. */
    public static String of(String raw, Collection<String> secrets) {
        String text = raw;
        for (String secret : secrets) {
            if (secret.strip().length() >= MIN_SECRET_LENGTH) {
                text = text.replace(secret, REDACTED);
            }
        }
        text = ECHOED_INPUT.matcher(text).replaceAll("input_value=" + REDACTED);
        text = SecretRedaction.redact(text);
        text = CONTROL_OR_SPACE_RUN.matcher(text).replaceAll(" ").strip();
        if (text.length() > MAX_LENGTH) {
            text = text.substring(0, MAX_LENGTH - 3) + "...";
        }
        return text;
    }
}
