package dev.readygate.simulator;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads one sample from Prometheus text (the sum over label sets when the series has several). */
final class Metrics {

    private Metrics() {}

    static double value(String exposition, String name) {
        Matcher matcher = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*})? (\\S+)$")
                .matcher(exposition);
        double sum = 0;
        boolean found = false;
        while (matcher.find()) {
            sum += Double.parseDouble(matcher.group(2));
            found = true;
        }
        if (!found) {
            throw new AssertionError("no sample " + name);
        }
        return sum;
    }
}
