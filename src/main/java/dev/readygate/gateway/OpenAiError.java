package dev.readygate.gateway;

/**
 * An error the gateway answers itself, in the shape OpenAI clients read:
 * {@code {"error":{"message":..,"type":..,"code":..}}}.
 *
 * @param status the HTTP status
 * @param message what went wrong, for a person
 * @param type the error's class ({@code service_unavailable}, {@code gateway_timeout}, ...)
 * @param code a stable word a client can match
 */
record OpenAiError(int status, String message, String type, String code) {

    String json() {
        return "{\"error\":{\"message\":" + quote(message) + ",\"type\":" + quote(type) + ",\"code\":" + quote(code)
                + "}}";
    }

    private static String quote(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
