import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;

/** A koikoi/1 bot on the JVM, started with no flags: it answers each request with its first legal action. */
public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.startsWith("{\"type\":\"hello\"")) {
                System.out.println("{\"type\":\"hello\",\"name\":\"jvm\"}");
            } else if (line.startsWith("{\"type\":\"request\"")) {
                String id = line.replaceAll(".*?\"id\":(\\d+).*", "$1");
                int start = line.indexOf("\"legal\":[") + 9;
                int end = line.indexOf('}', start) + 1;
                System.out.println("{\"type\":\"action\",\"id\":" + id + ",\"action\":" + line.substring(start, end) + "}");
            } else if (line.startsWith("{\"type\":\"bye\"")) {
                return;
            }
            System.out.flush();
        }
    }
}
