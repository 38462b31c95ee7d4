// {{NAME}}: a koikoi/1 bot. It reads one JSON message per line on stdin and answers requests on stdout.
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "json.hpp"

// A decision to make: answer with one of `legal`, echoing `id`.
struct Request {
    long long id = 0;
    std::string decision;
    std::vector<std::string> field;
    std::vector<json::Value> legal;

    static Request from(const json::Value& m) {
        Request r;
        r.id = static_cast<long long>(m.get("id")->n);
        r.decision = m.str("decision");
        for (const auto& c : m.get("view")->get("field")->items) r.field.push_back(c.s);
        r.legal = m.get("legal")->items;
        return r;
    }
};

// Debug output goes to stderr: the referee keeps it in a log file (stdout is for protocol lines only).
static void log(const std::string& text) { std::cerr << "[{{NAME}}] " << text << std::endl; }

static std::string month(const std::string& card) { return card.substr(0, card.find('-')); }

// The strategy: stop at the first yaku, else play a card that takes something from the field.
static const json::Value& choose(const Request& r) {
    if (r.decision == "koikoi") {
        for (const auto& a : r.legal) {
            const json::Value* k = a.get("koikoi");
            if (k && !k->b) return a;
        }
    }
    std::set<std::string> on_field;
    for (const auto& c : r.field) on_field.insert(month(c));
    for (const auto& a : r.legal) {
        if (a.get("capture") || (a.get("play") && on_field.count(month(a.str("play"))))) return a;
    }
    return r.legal.front();
}

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        json::Value m;
        try {
            m = json::parse(line);
        } catch (const std::exception& e) {
            log(std::string("bad line: ") + e.what());
            return 1;
        }
        const std::string type = m.str("type");
        std::string answer;
        if (type == "hello") {
            log("seat " + json::write(*m.get("seat")));
            answer = R"({"type":"hello","name":"{{NAME}}","version":"0.1","protocol":"koikoi/1"})";
        } else if (type == "new_match") {
            log("new match " + m.get("match")->str("id"));
        } else if (type == "request") {
            Request r = Request::from(m);
            answer = "{\"type\":\"action\",\"id\":" + std::to_string(r.id) + ",\"action\":" + json::write(choose(r)) + "}";
        } else if (type == "error") {
            log("referee: " + m.str("message"));
        } else if (type == "bye") {
            return 0;
        }
        if (!answer.empty()) std::cout << answer << std::endl;  // endl flushes: the referee is waiting
    }
    return 0;
}
