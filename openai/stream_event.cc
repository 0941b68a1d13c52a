// The OpenAI-compatible stream's event reader (see stream_event.h): a scanner that pulls the two
// fields the benchmark needs out of an event without building a JSON tree, and the full parse it
// falls back to.
#include "openai/stream_event.h"

#include <nlohmann/json.hpp>

namespace gauntlet::openai {
using nlohmann::json;

namespace {

// ---- one streamed chunk's fields, read without building a JSON tree ------------------------------

class Scan {
 public:
  explicit Scan(std::string_view s) : p_(s.data()), e_(s.data() + s.size()) {}
  bool ok() const { return ok_; }
  void Ws() {
    while (p_ < e_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool Eat(char c) {
    Ws();
    if (p_ < e_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  char Peek() {
    Ws();
    return p_ < e_ ? *p_ : '\0';
  }
  // A key's raw bytes (keys of OpenAI chunks have no escapes; one that has simply matches nothing).
  bool Key(std::string_view* k) {
    if (!Eat('"')) return Fail();
    const char* s = p_;
    while (p_ < e_ && *p_ != '"') p_ += *p_ == '\\' ? 2 : 1;
    if (p_ >= e_) return Fail();
    *k = std::string_view(s, static_cast<size_t>(p_ - s));
    ++p_;
    return Eat(':') || Fail();
  }
  // A string value, unescaped into UTF-8 (\uXXXX with surrogate pairs: U+FFFD must survive for the
  // garbage check).
  bool String(std::string* out) {
    if (!Eat('"')) return Fail();
    while (p_ < e_) {
      const char* s = p_;
      while (p_ < e_ && *p_ != '"' && *p_ != '\\') ++p_;
      out->append(s, static_cast<size_t>(p_ - s));
      if (p_ >= e_) return Fail();
      if (*p_ == '"') {
        ++p_;
        return true;
      }
      if (++p_ >= e_) return Fail();
      char c = *p_++;
      switch (c) {
        case '"': case '\\': case '/': out->push_back(c); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return Fail();
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t lo;
            if (e_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u' && (p_ += 2, Hex4(&lo)) && lo >= 0xDC00 && lo < 0xE000)
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            else cp = 0xFFFD;
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            cp = 0xFFFD;
          }
          Utf8(cp, out);
          break;
        }
        default: return Fail();
      }
    }
    return Fail();
  }
  bool Number(double* v) {
    Ws();
    const char* s = p_;
    while (p_ < e_ && (std::isdigit(static_cast<unsigned char>(*p_)) || *p_ == '-' || *p_ == '+' || *p_ == '.' ||
                       *p_ == 'e' || *p_ == 'E'))
      ++p_;
    if (p_ == s) return Fail();
    *v = std::strtod(std::string(s, p_).c_str(), nullptr);
    return true;
  }
  // Skips any value (strings honour escapes; NaN and other non-JSON fail, sending the event to the
  // full parser, which decides).
  bool Skip() {
    char c = Peek();
    if (c == '"') {
      ++p_;
      while (p_ < e_ && *p_ != '"') p_ += *p_ == '\\' ? 2 : 1;
      if (p_ >= e_) return Fail();
      ++p_;
      return true;
    }
    if (c == '{' || c == '[') {
      int depth = 0;
      while (p_ < e_) {
        char d = *p_;
        if (d == '"') {
          if (!Skip()) return false;
          continue;
        }
        ++p_;
        if (d == '{' || d == '[') ++depth;
        else if ((d == '}' || d == ']') && --depth == 0) return true;
      }
      return Fail();
    }
    if (c == 't' || c == 'f' || c == 'n') {
      for (std::string_view w : {"true", "false", "null"})
        if (static_cast<size_t>(e_ - p_) >= w.size() && std::string_view(p_, w.size()) == w) {
          p_ += w.size();
          return true;
        }
      return Fail();
    }
    double d;
    return Number(&d);
  }
  // Walks an object, calling f(key) for each member; f consumes the value (or returns false).
  template <typename F>
  bool Object(F&& f) {
    if (!Eat('{')) return Fail();
    if (Eat('}')) return true;
    do {
      std::string_view k;
      if (!Key(&k) || !f(k)) return Fail();
    } while (Eat(','));
    return Eat('}') || Fail();
  }

 private:
  bool Fail() { return ok_ = false; }
  bool Hex4(uint32_t* v) {
    if (e_ - p_ < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = *p_++;
      *v <<= 4;
      if (c >= '0' && c <= '9') *v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') *v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') *v |= static_cast<uint32_t>(c - 'A' + 10);
      else return false;
    }
    return true;
  }
  static void Utf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) out->push_back(static_cast<char>(cp));
    else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  const char* p_;
  const char* e_;
  bool ok_ = true;
};

}  // namespace

bool ScanStreamEvent(std::string_view data, StreamEvent* ev) {
  Scan s(data);
  bool ok = s.Object([&](std::string_view k) {
    if (k == "choices" && s.Peek() == '[') {
      s.Eat('[');
      if (s.Eat(']')) return true;
      bool ok_first = s.Object([&](std::string_view ck) {
        if (ck == "text" && s.Peek() == '"') return s.String(&ev->piece);
        if (ck == "delta" && s.Peek() == '{')
          return s.Object([&](std::string_view dk) {
            if (dk == "content" && s.Peek() == '"') return s.String(&ev->piece);
            return s.Skip();
          });
        return s.Skip();
      });
      if (!ok_first) return false;
      while (s.Eat(','))
        if (!s.Skip()) return false;
      return s.Eat(']');
    }
    if (k == "usage" && s.Peek() == '{')
      return s.Object([&](std::string_view uk) {
        if (uk == "completion_tokens" && s.Peek() != 'n') return s.Number(&ev->usage_tokens);
        return s.Skip();
      });
    return s.Skip();
  });
  return ok && s.ok();
}

bool ParseStreamEvent(std::string_view data, StreamEvent* ev) {
  json j = json::parse(data, nullptr, false);
  if (!j.is_object()) return false;
  if (j.contains("usage") && j["usage"].is_object() && j["usage"].contains("completion_tokens") &&
      j["usage"]["completion_tokens"].is_number())
    ev->usage_tokens = j["usage"]["completion_tokens"].get<double>();
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() || !j["choices"][0].is_object())
    return true;
  const json& c = j["choices"][0];
  if (c.contains("text") && c["text"].is_string()) ev->piece = c["text"];
  else if (c.contains("delta") && c["delta"].is_object() && c["delta"].contains("content") &&
           c["delta"]["content"].is_string())
    ev->piece = c["delta"]["content"];
  return true;
}

void JsonEscape(std::string_view s, std::string* out) {
  static const char* kHex = "0123456789abcdef";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[(c >> 4) & 15]);
      out->push_back(kHex[c & 15]);
    } else {
      out->push_back(c);
    }
  }
}

}  // namespace gauntlet::openai
