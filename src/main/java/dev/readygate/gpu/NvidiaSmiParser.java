package dev.readygate.gpu;

import java.io.IOException;
import java.io.StringReader;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.jspecify.annotations.Nullable;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.ErrorHandler;
import org.xml.sax.InputSource;
import org.xml.sax.SAXException;
import org.xml.sax.SAXParseException;

/**
 * Parses what {@code nvidia-smi} prints (no I/O): the CSV of {@code --query-gpu} and {@code --query-compute-apps}, with
 * or without header and units, and the XML of {@code nvidia-smi -q -x}. Sizes in MiB become bytes.
 *
 * <p>CSV with a header takes its columns from the header (units such as {@code [MiB]} are dropped, and
 * {@code used_gpu_memory}, the header nvidia-smi prints for {@code used_memory}, is understood); CSV without a header
 * takes them from the fields that were queried. Optional values ({@code name}, {@code driver_version},
 * {@code memory.reserved}, {@code index}) may be missing, {@code [N/A]} or {@code [Not Supported]}. Anything else that
 * does not parse gives a {@link GpuReading.Reason#UNEXPECTED_OUTPUT} naming the line or element; no exception escapes.
 */
public final class NvidiaSmiParser {

    /** The fields readygate queries with {@code --query-gpu}, in order. */
    public static final List<String> GPU_FIELDS = List.of(
            "index", "uuid", "name", "driver_version", "memory.total", "memory.used", "memory.free", "memory.reserved");

    /** The fields readygate queries with {@code --query-compute-apps}, in order. */
    public static final List<String> APP_FIELDS = List.of("pid", "process_name", "gpu_uuid", "used_memory");

    static final long MIB = 1024L * 1024L;

    private static final String MIB_SUFFIX = "MiB";

    private static final Set<String> KNOWN_FIELDS = Set.of(
            "index",
            "uuid",
            "name",
            "driver_version",
            "memory.total",
            "memory.used",
            "memory.free",
            "memory.reserved",
            "pid",
            "process_name",
            "gpu_uuid",
            "used_memory");

    private static final Set<String> NOT_AVAILABLE =
            Set.of("", "[N/A]", "N/A", "[Not Supported]", "Not Supported", "[Unknown Error]");

    private static final DocumentBuilderFactory XML = secureFactory();

    private NvidiaSmiParser() {}

    /**
     * Parses the output of the two CSV queries into one snapshot.
     *
     * @param queryGpu the output of {@code --query-gpu=...} ({@code csv} or {@code csv,noheader,nounits})
     * @param gpuFields the fields that were queried, used when the output has no header
     * @param computeApps the output of {@code --query-compute-apps=...}; empty or header only means no process
     * @param appFields the fields that were queried, used when the output has no header
     * @param at when the output was taken
     */
    public static GpuReading parseCsv(
            String queryGpu, List<String> gpuFields, String computeApps, List<String> appFields, Instant at) {
        try {
            GpuRows gpus = gpuRows(queryGpu, gpuFields);
            List<GpuProcess> processes = processRows(computeApps, appFields);
            return new GpuReading.Success(new GpuSnapshot(at, gpus.gpus(), processes, gpus.driverVersion()));
        } catch (UnexpectedOutput ex) {
            return unexpected(ex.getMessage());
        }
    }

    /**
     * Parses the XML of {@code nvidia-smi -q -x}. The DOCTYPE it carries is never fetched: external DTDs and entities
     * are off, so parsing works offline.
     */
    public static GpuReading parseXml(String xml, Instant at) {
        try {
            Document document = parseDocument(xml);
            Element root = document.getDocumentElement();
            if (!"nvidia_smi_log".equals(root.getTagName())) {
                throw new UnexpectedOutput("root element <" + root.getTagName() + ">, not <nvidia_smi_log>");
            }
            String driverVersion = optional(childText(root, "driver_version"));
            String cudaVersion = optional(childText(root, "cuda_version"));
            List<GpuMemory> gpus = new ArrayList<>();
            List<GpuProcess> processes = new ArrayList<>();
            for (Element gpu : children(root, "gpu")) {
                GpuMemory memory = xmlGpu(gpu, gpus.size());
                gpus.add(memory);
                Element list = child(gpu, "processes");
                if (list != null) {
                    for (Element info : children(list, "process_info")) {
                        processes.add(xmlProcess(info, memory.uuid()));
                    }
                }
            }
            if (gpus.isEmpty()) {
                throw new UnexpectedOutput("no <gpu> element");
            }
            return new GpuReading.Success(new GpuSnapshot(at, gpus, processes, driverVersion, cudaVersion));
        } catch (UnexpectedOutput ex) {
            return unexpected(ex.getMessage());
        }
    }

    private static GpuReading unexpected(@Nullable String detail) {
        return new GpuReading.Failure(
                GpuReading.Reason.UNEXPECTED_OUTPUT, detail == null ? "unexpected output" : detail);
    }

    // ---- CSV

    private record GpuRows(List<GpuMemory> gpus, @Nullable String driverVersion) {}

    private static GpuRows gpuRows(String csv, List<String> fields) {
        Table table = Table.of(csv, fields, "query-gpu");
        List<GpuMemory> gpus = new ArrayList<>();
        String driverVersion = null;
        for (Row row : table.rows()) {
            String uuid = row.required("uuid");
            Long index = row.optionalNumber("index");
            String name = row.optional("name");
            String driver = row.optional("driver_version");
            if (driverVersion == null) {
                driverVersion = driver;
            }
            gpus.add(new GpuMemory(
                    uuid,
                    index == null ? gpus.size() : Math.toIntExact(index),
                    name == null ? "" : name,
                    row.mib("memory.total"),
                    row.mib("memory.used"),
                    row.mib("memory.free"),
                    row.optionalMib("memory.reserved")));
        }
        if (gpus.isEmpty()) {
            throw new UnexpectedOutput("query-gpu: no GPU listed");
        }
        return new GpuRows(gpus, driverVersion);
    }

    private static List<GpuProcess> processRows(String csv, List<String> fields) {
        Table table = Table.of(csv, fields, "query-compute-apps");
        List<GpuProcess> processes = new ArrayList<>();
        for (Row row : table.rows()) {
            long pid = row.number("pid");
            if (pid < 0 || pid > Integer.MAX_VALUE) {
                throw new UnexpectedOutput(row.where() + ": pid " + pid + " out of range");
            }
            String name = row.optional("process_name");
            processes.add(new GpuProcess(
                    (int) pid, name == null ? "" : name, row.required("gpu_uuid"), row.mib("used_memory")));
        }
        return processes;
    }

    /** A CSV output: its columns (from the header or the queried fields) and its data lines. */
    private record Table(String source, List<String> columns, List<String> lines, int firstLineNumber) {

        static Table of(String csv, List<String> fields, String source) {
            List<String> all = csv.lines().toList();
            int first = 0;
            while (first < all.size() && all.get(first).isBlank()) {
                first++;
            }
            if (first < all.size() && isHeader(all.get(first))) {
                List<String> columns =
                        cells(all.get(first)).stream().map(Table::column).toList();
                return new Table(source, columns, all.subList(first + 1, all.size()), first + 2);
            }
            return new Table(source, fields, all.subList(first, all.size()), first + 1);
        }

        private static boolean isHeader(String line) {
            return cells(line).stream().map(Table::column).anyMatch(KNOWN_FIELDS::contains);
        }

        /** {@code memory.total [MiB]} to {@code memory.total}; {@code used_gpu_memory} to {@code used_memory}. */
        private static String column(String header) {
            String name = header;
            int unit = name.indexOf('[');
            if (unit >= 0) {
                name = name.substring(0, unit);
            }
            name = name.strip().toLowerCase(Locale.ROOT);
            return "used_gpu_memory".equals(name) ? "used_memory" : name;
        }

        List<Row> rows() {
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                if (line.isBlank() || line.strip().equalsIgnoreCase("No running processes found")) {
                    continue;
                }
                rows.add(row(line, firstLineNumber + i));
            }
            return rows;
        }

        private Row row(String line, int lineNumber) {
            String where = source + " line " + lineNumber;
            List<String> cells = cells(line);
            int processName = columns.indexOf("process_name");
            int extra = cells.size() - columns.size();
            if (extra > 0 && processName >= 0) {
                // nvidia-smi does not quote: a process name holding commas spans several cells.
                List<String> merged = new ArrayList<>(cells.subList(0, processName));
                merged.add(String.join(", ", cells.subList(processName, processName + extra + 1)));
                merged.addAll(cells.subList(processName + extra + 1, cells.size()));
                cells = merged;
            }
            if (cells.size() != columns.size()) {
                throw new UnexpectedOutput(
                        where + ": " + cells.size() + " values for " + columns.size() + " columns: " + excerpt(line));
            }
            Map<String, String> values = new HashMap<>();
            for (int i = 0; i < columns.size(); i++) {
                values.put(columns.get(i), cells.get(i));
            }
            return new Row(where, values);
        }

        private static List<String> cells(String line) {
            List<String> cells = new ArrayList<>();
            for (String cell : line.split(",", -1)) {
                cells.add(cell.strip());
            }
            return cells;
        }
    }

    /** One CSV data line, by column name. */
    private record Row(String where, Map<String, String> values) {

        String required(String column) {
            String value = optional(column);
            if (value == null) {
                throw new UnexpectedOutput(
                        where + ": " + (values.containsKey(column) ? "no value" : "no column") + " for " + column);
            }
            return value;
        }

        @Nullable
        String optional(String column) {
            return NvidiaSmiParser.optional(values.get(column));
        }

        long number(String column) {
            return parseLong(required(column), where + " " + column);
        }

        @Nullable
        Long optionalNumber(String column) {
            String value = optional(column);
            return value == null ? null : parseLong(value, where + " " + column);
        }

        long mib(String column) {
            return toBytes(required(column), where + " " + column);
        }

        @Nullable
        Long optionalMib(String column) {
            String value = optional(column);
            return value == null ? null : toBytes(value, where + " " + column);
        }
    }

    // ---- XML

    private static GpuMemory xmlGpu(Element gpu, int position) {
        String uuid = requiredText(gpu, "uuid", "<gpu>");
        String where = "<gpu> " + uuid;
        String minor = optional(childText(gpu, "minor_number"));
        Element memory = child(gpu, "fb_memory_usage");
        if (memory == null) {
            throw new UnexpectedOutput(where + ": no <fb_memory_usage>");
        }
        String memoryWhere = where + " <fb_memory_usage>";
        String reserved = optional(childText(memory, "reserved"));
        String name = optional(childText(gpu, "product_name"));
        return new GpuMemory(
                uuid,
                minor == null ? position : Math.toIntExact(parseLong(minor, where + " <minor_number>")),
                name == null ? "" : name,
                toBytes(requiredText(memory, "total", memoryWhere), memoryWhere + " <total>"),
                toBytes(requiredText(memory, "used", memoryWhere), memoryWhere + " <used>"),
                toBytes(requiredText(memory, "free", memoryWhere), memoryWhere + " <free>"),
                reserved == null ? null : toBytes(reserved, memoryWhere + " <reserved>"));
    }

    private static GpuProcess xmlProcess(Element info, String gpuUuid) {
        String where = "<process_info> on " + gpuUuid;
        long pid = parseLong(requiredText(info, "pid", where), where + " <pid>");
        if (pid < 0 || pid > Integer.MAX_VALUE) {
            throw new UnexpectedOutput(where + ": pid " + pid + " out of range");
        }
        String name = optional(childText(info, "process_name"));
        String used = requiredText(info, "used_memory", where + " pid " + pid);
        return new GpuProcess(
                (int) pid, name == null ? "" : name, gpuUuid, toBytes(used, where + " pid " + pid + " <used_memory>"));
    }

    private static Document parseDocument(String xml) {
        try {
            DocumentBuilder builder;
            synchronized (XML) {
                builder = XML.newDocumentBuilder();
            }
            // Never fetch the DOCTYPE's DTD (nor any other external entity): parsing must work offline.
            builder.setEntityResolver((publicId, systemId) -> new InputSource(new StringReader("")));
            builder.setErrorHandler(new ErrorHandler() {
                @Override
                public void warning(SAXParseException exception) {}

                @Override
                public void error(SAXParseException exception) throws SAXException {
                    throw exception;
                }

                @Override
                public void fatalError(SAXParseException exception) throws SAXException {
                    throw exception;
                }
            });
            return builder.parse(new InputSource(new StringReader(xml)));
        } catch (SAXParseException ex) {
            throw new UnexpectedOutput(
                    "XML line " + ex.getLineNumber() + ": " + excerpt(String.valueOf(ex.getMessage())));
        } catch (SAXException | IOException | ParserConfigurationException ex) {
            throw new UnexpectedOutput("XML: " + excerpt(String.valueOf(ex.getMessage())));
        }
    }

    private static DocumentBuilderFactory secureFactory() {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        try {
            factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            factory.setFeature("http://xml.org/sax/features/external-general-entities", false);
            factory.setFeature("http://xml.org/sax/features/external-parameter-entities", false);
            factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        } catch (ParserConfigurationException ex) {
            throw new IllegalStateException("The JDK's XML parser cannot be configured securely", ex);
        }
        factory.setAttribute(XMLConstants.ACCESS_EXTERNAL_DTD, "");
        factory.setAttribute(XMLConstants.ACCESS_EXTERNAL_SCHEMA, "");
        factory.setXIncludeAware(false);
        factory.setExpandEntityReferences(false);
        factory.setNamespaceAware(false);
        factory.setValidating(false);
        return factory;
    }

    private static @Nullable Element child(Element parent, String name) {
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && name.equals(element.getTagName())) {
                return element;
            }
        }
        return null;
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> children = new ArrayList<>();
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && name.equals(element.getTagName())) {
                children.add(element);
            }
        }
        return children;
    }

    private static @Nullable String childText(Element parent, String name) {
        Element element = child(parent, name);
        return element == null ? null : element.getTextContent().strip();
    }

    private static String requiredText(Element parent, String name, String where) {
        String value = optional(childText(parent, name));
        if (value == null) {
            throw new UnexpectedOutput(where + ": no <" + name + ">");
        }
        return value;
    }

    // ---- values

    private static @Nullable String optional(@Nullable String value) {
        if (value == null) {
            return null;
        }
        String stripped = value.strip();
        return NOT_AVAILABLE.contains(stripped) ? null : stripped;
    }

    /** {@code 143771 MiB} or {@code 143771} (MiB, as {@code nounits} prints it) to bytes. */
    private static long toBytes(String value, String where) {
        String number = value.strip();
        if (number.endsWith(MIB_SUFFIX)) {
            number = number.substring(0, number.length() - MIB_SUFFIX.length()).strip();
        }
        long mib = parseLong(number, where);
        if (mib < 0) {
            throw new UnexpectedOutput(where + ": negative size " + excerpt(value));
        }
        try {
            return Math.multiplyExact(mib, MIB);
        } catch (ArithmeticException ex) {
            throw new UnexpectedOutput(where + ": size too large " + excerpt(value));
        }
    }

    private static long parseLong(String value, String where) {
        try {
            return Long.parseLong(value.strip());
        } catch (NumberFormatException ex) {
            throw new UnexpectedOutput(where + ": not a number: " + excerpt(value));
        }
    }

    static String excerpt(String text) {
        String line = text.strip();
        return line.length() <= 80 ? line : line.substring(0, 80) + "...";
    }

    /** Thrown inside the parser only; every public method turns it into a failure. */
    private static final class UnexpectedOutput extends RuntimeException {

        UnexpectedOutput(String message) {
            super(message, null, false, false);
        }
    }
}
