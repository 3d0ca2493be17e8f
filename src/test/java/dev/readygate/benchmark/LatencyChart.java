package dev.readygate.benchmark;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The latency distributions as one SVG: a row per series on a logarithmic time axis (0.1 ms to 100 s), every sample a
 * dot (at most 1500 drawn per row, evenly chosen from the sorted samples), with ticks at p50 and p99 and a cross at
 * the maximum. Written by the harness itself; no plotting library.
 */
final class LatencyChart {

    /** One row: its samples (ms), label, and colour. */
    record Row(String label, Samples samples, String colour) {}

    static final String READYGATE = "#1f6fb4";
    static final String BASELINE = "#e07b00";
    static final String LOAD = "#2a9d4a";

    private static final double MIN_MS = 0.1;
    private static final double MAX_MS = 100_000;
    private static final int LEFT = 330;
    private static final int WIDTH = 620;
    private static final int ROW = 26;
    private static final int TOP = 46;

    private final List<Row> rows = new ArrayList<>();
    private final List<String> sections = new ArrayList<>();

    void section(String title) {
        sections.add(rows.size() + "\u0000" + title);
    }

    void row(String label, Samples samples, String colour) {
        if (!samples.isEmpty()) {
            rows.add(new Row(label, samples, colour));
        }
    }

    String svg(String title) {
        int sectionCount = sections.size();
        int height = TOP + rows.size() * ROW + sectionCount * 22 + 50;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                        + "font-family=\"sans-serif\" font-size=\"12\">\n",
                LEFT + WIDTH + 30,
                height,
                LEFT + WIDTH + 30,
                height));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        svg.append(text(10, 20, escape(title), "font-size=\"15\" font-weight=\"bold\""));
        svg.append(text(
                10,
                36,
                "dots: samples; | p50 and p99; x: max. Log scale. Blue: readygate; orange: kubelet /health baseline;"
                        + " green: /readyz under load.",
                "fill=\"#555\""));
        int axisBottom = height - 40;
        for (double ms = MIN_MS; ms <= MAX_MS; ms *= 10) {
            double x = x(ms);
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n",
                    x,
                    TOP - 6,
                    x,
                    axisBottom));
            svg.append(text(x - 14, axisBottom + 16, label(ms), "fill=\"#333\""));
        }
        svg.append(text(LEFT + WIDTH / 2.0 - 20, axisBottom + 32, "time", "fill=\"#333\""));
        int y = TOP;
        int rowIndex = 0;
        SplittableRandom random = new SplittableRandom(1);
        for (int r = 0; r <= rows.size(); r++) {
            for (String section : sections) {
                String[] parts = section.split("\u0000", 2);
                if (Integer.parseInt(parts[0]) == r) {
                    y += 6;
                    svg.append(text(10, y + 10, escape(parts[1]), "font-weight=\"bold\""));
                    y += 16;
                }
            }
            if (r == rows.size()) {
                break;
            }
            Row row = rows.get(r);
            double mid = y + ROW / 2.0;
            if (rowIndex++ % 2 == 0) {
                svg.append(String.format(
                        Locale.ROOT,
                        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f6f6f6\"/>\n",
                        LEFT,
                        y,
                        WIDTH,
                        ROW));
            }
            svg.append(text(
                    10, mid + 4, escape(row.label() + " (n=" + row.samples().count() + ")"), "fill=\"#222\""));
            double[] sorted = row.samples().sorted();
            int step = Math.max(1, sorted.length / 1500);
            for (int i = 0; i < sorted.length; i += step) {
                double jitter = (random.nextDouble() - 0.5) * (ROW - 10);
                svg.append(String.format(
                        Locale.ROOT,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.6\" fill=\"%s\" fill-opacity=\"0.35\"/>\n",
                        x(sorted[i]),
                        mid + jitter,
                        row.colour()));
            }
            for (double q : new double[] {row.samples().p50(), row.samples().p99()}) {
                svg.append(String.format(
                        Locale.ROOT,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-width=\"2\"/>\n",
                        x(q),
                        mid - ROW / 2.0 + 2,
                        x(q),
                        mid + ROW / 2.0 - 2));
            }
            double max = x(row.samples().max());
            svg.append(String.format(
                    Locale.ROOT,
                    "<path d=\"M%.1f %.1f l6 6 m0 -6 l-6 6\" stroke=\"#c00\" stroke-width=\"1.5\"/>\n",
                    max - 3,
                    mid - 3));
            y += ROW;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static double x(double ms) {
        double clamped = Math.max(MIN_MS, Math.min(MAX_MS, ms));
        return LEFT + WIDTH * (Math.log10(clamped) - Math.log10(MIN_MS)) / (Math.log10(MAX_MS) - Math.log10(MIN_MS));
    }

    private static String label(double ms) {
        if (ms < 1) {
            return String.format(Locale.ROOT, "%.1f ms", ms);
        }
        if (ms < 1000) {
            return String.format(Locale.ROOT, "%.0f ms", ms);
        }
        return String.format(Locale.ROOT, "%.0f s", ms / 1000);
    }

    private static String text(double x, double y, String content, String attributes) {
        return String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" %s>%s</text>\n", x, y, attributes, content);
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
