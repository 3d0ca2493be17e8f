package dev.readygate.evidence;

/**
 * Replaces the value of every {@code api_key} entry (and {@code *api_key}) in a printed Python mapping or argument list (vLLM's
 * {@code non-default args: {...}}, an argparse {@code Namespace(...)}) by {@code '<redacted>'}, so engine arguments
 * can be kept in restart records and logs. The value is scanned as a Python literal: a quoted string, a bracketed
 * list, tuple or dict (quotes and nesting respected) or a bare token. An unterminated value is redacted to the end of
 * the text; {@code None} (or nothing) is kept, since it hides nothing.
 */
final class ApiKeyRedaction {

    static final String REDACTED = "'<redacted>'";

    private static final String KEY = "api_key";

    private ApiKeyRedaction() {}

    static String redact(String text) {
        int from = text.indexOf(KEY);
        if (from < 0) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length());
        int copied = 0;
        while (from >= 0) {
            int valueStart = valueStart(text, from);
            if (valueStart < 0) {
                from = text.indexOf(KEY, from + KEY.length());
                continue;
            }
            int valueEnd = valueEnd(text, valueStart);
            String value = text.substring(valueStart, valueEnd);
            out.append(text, copied, valueStart);
            out.append(value.isBlank() || value.strip().equals("None") ? value : REDACTED);
            copied = valueEnd;
            from = text.indexOf(KEY, valueEnd);
        }
        return out.append(text, copied, text.length()).toString();
    }

    /**
     * Where the value of the key at {@code at} starts, or -1 when {@code at} is not a key's end (e.g.
     * {@code api_key_file}). Keys that end in {@code api_key} ({@code openai_api_key}) are redacted too.
     */
    private static int valueStart(String text, int at) {
        int i = at + KEY.length();
        if (i < text.length() && (text.charAt(i) == '\'' || text.charAt(i) == '"')) {
            i++;
        }
        i = skipSpaces(text, i);
        if (i >= text.length() || (text.charAt(i) != ':' && text.charAt(i) != '=')) {
            return -1;
        }
        return skipSpaces(text, i + 1);
    }

    /** The end (exclusive) of the Python literal starting at {@code start}. */
    private static int valueEnd(String text, int start) {
        int depth = 0;
        int i = start;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '\'' || c == '"') {
                i = afterString(text, i);
                if (depth == 0) {
                    return i;
                }
                continue;
            }
            if (c == '[' || c == '(' || c == '{') {
                depth++;
            } else if (c == ']' || c == ')' || c == '}') {
                if (depth == 0) {
                    return i;
                }
                depth--;
                if (depth == 0) {
                    return i + 1;
                }
            } else if (c == ',' && depth == 0) {
                return i;
            }
            i++;
        }
        return text.length();
    }

    /** The index after the closing quote of the string opening at {@code open}, or the text's end. */
    private static int afterString(String text, int open) {
        char quote = text.charAt(open);
        int i = open + 1;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '\\') {
                i += 2;
            } else if (c == quote) {
                return i + 1;
            } else {
                i++;
            }
        }
        return text.length();
    }

    private static int skipSpaces(String text, int from) {
        int i = from;
        while (i < text.length() && text.charAt(i) == ' ') {
            i++;
        }
        return i;
    }
}
