// Reads YAML files with SnakeYAML (1.33 in Debian's libyaml-snake-java: the
// parser family CircleCI reads config.yml with), one JVM for them all.
// Usage: java -cp snakeyaml.jar:DIR SnakeRead < LIST, LIST one path a line.
// Prints one line per file: "ok PATH", or "refused PATH LINE:COL MESSAGE"
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
    public static void main(String[] args) throws Exception {
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
                y.load(r);
                out.println("ok " + path);
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
