// A small JSON reader and writer (the bot needs no library).
#pragma once
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace json {

struct Value {
    enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
    bool b = false;
    double n = 0;
    std::string s;
    std::vector<Value> items;
    std::vector<std::pair<std::string, Value>> fields;

    const Value* get(const std::string& key) const {
        for (const auto& [k, v] : fields)
            if (k == key) return &v;
        return nullptr;
    }
    std::string str(const std::string& key) const {
        const Value* v = get(key);
        return v && v->kind == Kind::String ? v->s : std::string();
    }
};

inline std::string quote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') { out += '\\'; out += static_cast<char>(c); }
        else if (c < 0x20) { char buf[8]; std::snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
        else out += static_cast<char>(c);
    }
    return out + "\"";
}

inline std::string write(const Value& v) {
    switch (v.kind) {
        case Value::Kind::Null: return "null";
        case Value::Kind::Bool: return v.b ? "true" : "false";
        case Value::Kind::Number: {
            if (v.n == static_cast<double>(static_cast<long long>(v.n))) return std::to_string(static_cast<long long>(v.n));
            return std::to_string(v.n);
        }
        case Value::Kind::String: return quote(v.s);
        case Value::Kind::Array: {
            std::string out = "[";
            for (size_t k = 0; k < v.items.size(); ++k) out += (k ? "," : "") + write(v.items[k]);
            return out + "]";
        }
        case Value::Kind::Object: {
            std::string out = "{";
            for (size_t k = 0; k < v.fields.size(); ++k)
                out += (k ? "," : "") + quote(v.fields[k].first) + ":" + write(v.fields[k].second);
            return out + "}";
        }
    }
    return "null";
}

class Parser {
  public:
    explicit Parser(const std::string& text) : s_(text) {}
    Value parse() {
        Value v = value();
        space();
        if (i_ != s_.size()) throw std::runtime_error("trailing characters");
        return v;
    }

  private:
    const std::string& s_;
    size_t i_ = 0;

    void space() { while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n')) ++i_; }
    char peek() const { if (i_ >= s_.size()) throw std::runtime_error("unexpected end"); return s_[i_]; }
    void expect(char c) { if (peek() != c) throw std::runtime_error(std::string("expected ") + c); ++i_; }
    void word(const char* w) { for (; *w; ++w) expect(*w); }

    Value value() {
        space();
        Value v;
        char c = peek();
        if (c == '{') {
            v.kind = Value::Kind::Object;
            ++i_; space();
            if (peek() == '}') { ++i_; return v; }
            for (;;) {
                space(); std::string k = string(); space(); expect(':');
                v.fields.emplace_back(k, value()); space();
                if (peek() == ',') { ++i_; continue; }
                expect('}'); return v;
            }
        }
        if (c == '[') {
            v.kind = Value::Kind::Array;
            ++i_; space();
            if (peek() == ']') { ++i_; return v; }
            for (;;) {
                v.items.push_back(value()); space();
                if (peek() == ',') { ++i_; continue; }
                expect(']'); return v;
            }
        }
        if (c == '"') { v.kind = Value::Kind::String; v.s = string(); return v; }
        if (c == 't') { word("true"); v.kind = Value::Kind::Bool; v.b = true; return v; }
        if (c == 'f') { word("false"); v.kind = Value::Kind::Bool; return v; }
        if (c == 'n') { word("null"); return v; }
        size_t start = i_;
        while (i_ < s_.size() && std::string("+-0123456789.eE").find(s_[i_]) != std::string::npos) ++i_;
        if (start == i_) throw std::runtime_error("bad value");
        v.kind = Value::Kind::Number;
        v.n = std::stod(s_.substr(start, i_ - start));
        return v;
    }

    std::string string() {
        expect('"');
        std::string out;
        for (;;) {
            char c = peek(); ++i_;
            if (c == '"') return out;
            if (c != '\\') { out += c; continue; }
            char e = peek(); ++i_;
            switch (e) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'u': {
                    unsigned code = std::stoul(s_.substr(i_, 4), nullptr, 16);
                    i_ += 4;
                    if (code < 0x80) out += static_cast<char>(code);
                    else if (code < 0x800) { out += static_cast<char>(0xC0 | (code >> 6)); out += static_cast<char>(0x80 | (code & 0x3F)); }
                    else { out += static_cast<char>(0xE0 | (code >> 12)); out += static_cast<char>(0x80 | ((code >> 6) & 0x3F)); out += static_cast<char>(0x80 | (code & 0x3F)); }
                    break;
                }
                default: out += e;
            }
        }
    }
};

inline Value parse(const std::string& text) { return Parser(text).parse(); }

}  // namespace json
