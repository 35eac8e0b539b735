// Reads YAML files with SnakeYAML (1.33 in Debian's libyaml-snake-java: the
// parser family CircleCI reads config.yml with), one JVM for them all.
// Usage: java -cp snakeyaml.jar:DIR SnakeRead [--json] < LIST, LIST one path
// a line.  Prints one line per file: "ok PATH" (with --json, then a tab and
// the document as JSON: strings, numbers, booleans, null as SnakeYAML built
// them, anything else as "!Type:value"), or "refused PATH LINE:COL MESSAGE"
// (the position 1-based, the message on one line).
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.representer.Representer;
import java.io.*;
import java.nio.charset.StandardCharsets;

public class SnakeRead {
    static void str(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || c == 0x2028 || c == 0x2029 || c == 0x85) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        b.append('"');
    }

    static void json(StringBuilder b, Object o) {
        if (o == null) { b.append("null"); return; }
        if (o instanceof java.util.Map) {
            b.append('{'); boolean first = true;
            for (java.util.Map.Entry<?, ?> e : ((java.util.Map<?, ?>) o).entrySet()) {
                if (!first) b.append(','); first = false;
                Object k = e.getKey();
                str(b, k instanceof String ? (String) k : "!" + (k == null ? "null" : k.getClass().getSimpleName() + ":" + k));
                b.append(':'); json(b, e.getValue());
            }
            b.append('}'); return;
        }
        if (o instanceof java.util.List) {
            b.append('['); boolean first = true;
            for (Object x : (java.util.List<?>) o) { if (!first) b.append(','); first = false; json(b, x); }
            b.append(']'); return;
        }
        if (o instanceof String) { str(b, (String) o); return; }
        if (o instanceof Boolean || o instanceof Integer || o instanceof Long || o instanceof java.math.BigInteger) { b.append(o); return; }
        str(b, "!" + o.getClass().getSimpleName() + ":" + o);
    }

    public static void main(String[] args) throws Exception {
        boolean withJson = args.length > 0 && args[0].equals("--json");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        String path;
        while ((path = in.readLine()) != null) {
            if (path.isEmpty())
                continue;
            LoaderOptions lo = new LoaderOptions();
            lo.setMaxAliasesForCollections(100000);
            lo.setCodePointLimit(256 * 1024 * 1024);
            lo.setAllowDuplicateKeys(false);
            DumperOptions dopt = new DumperOptions();
            Yaml y = new Yaml(new SafeConstructor(lo), new Representer(dopt), dopt, lo);
            try (Reader r = new InputStreamReader(new FileInputStream(path), StandardCharsets.UTF_8)) {
                Object doc = y.load(r);
                if (withJson) {
                    StringBuilder b = new StringBuilder();
                    json(b, doc);
                    out.println("ok " + path + "\t" + b);
                } else {
                    out.println("ok " + path);
                }
            } catch (MarkedYAMLException e) {
                Mark m = e.getProblemMark();
                String msg = (e.getContext() != null ? e.getContext() + "; " : "") + e.getProblem();
                out.println("refused " + path + " " + (m != null ? (m.getLine() + 1) + ":" + (m.getColumn() + 1) : "0:0")
                            + " " + msg.replace('\n', ' '));
            } catch (Throwable e) {
                out.println("refused " + path + " 0:0 " + e.toString().replace('\n', ' '));
            }
        }
    }
}
