//! A small JSON reader and writer (the bot needs no crates).

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    Str(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl Value {
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        if let Value::Str(s) = self { Some(s) } else { None }
    }
    pub fn as_i64(&self) -> Option<i64> {
        if let Value::Number(n) = self { Some(*n as i64) } else { None }
    }
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        if let Value::Array(a) = self { Some(a) } else { None }
    }
    pub fn to_json(&self) -> String {
        match self {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) if n.fract() == 0.0 => format!("{}", *n as i64),
            Value::Number(n) => n.to_string(),
            Value::Str(s) => quote(s),
            Value::Array(a) => format!("[{}]", a.iter().map(Value::to_json).collect::<Vec<_>>().join(",")),
            Value::Object(f) => format!(
                "{{{}}}",
                f.iter().map(|(k, v)| format!("{}:{}", quote(k), v.to_json())).collect::<Vec<_>>().join(",")
            ),
        }
    }
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub fn parse(text: &str) -> Result<Value, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = Parser { s: &chars, i: 0 };
    let v = p.value()?;
    p.space();
    if p.i != chars.len() {
        return Err(format!("trailing characters at {}", p.i));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [char],
    i: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&self) -> Result<char, String> {
        self.s.get(self.i).copied().ok_or_else(|| "unexpected end".to_string())
    }
    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.peek()? != c {
            return Err(format!("expected {c} at {}", self.i));
        }
        self.i += 1;
        Ok(())
    }
    fn word(&mut self, w: &str, v: Value) -> Result<Value, String> {
        for c in w.chars() {
            self.expect(c)?;
        }
        Ok(v)
    }
    fn value(&mut self) -> Result<Value, String> {
        self.space();
        match self.peek()? {
            '{' => {
                self.i += 1;
                let mut fields = Vec::new();
                self.space();
                if self.peek()? == '}' {
                    self.i += 1;
                    return Ok(Value::Object(fields));
                }
                loop {
                    self.space();
                    let k = self.string()?;
                    self.space();
                    self.expect(':')?;
                    fields.push((k, self.value()?));
                    self.space();
                    if self.peek()? == ',' {
                        self.i += 1;
                    } else {
                        self.expect('}')?;
                        return Ok(Value::Object(fields));
                    }
                }
            }
            '[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.space();
                if self.peek()? == ']' {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    self.space();
                    if self.peek()? == ',' {
                        self.i += 1;
                    } else {
                        self.expect(']')?;
                        return Ok(Value::Array(items));
                    }
                }
            }
            '"' => Ok(Value::Str(self.string()?)),
            't' => self.word("true", Value::Bool(true)),
            'f' => self.word("false", Value::Bool(false)),
            'n' => self.word("null", Value::Null),
            _ => {
                let start = self.i;
                while self.i < self.s.len() && "+-0123456789.eE".contains(self.s[self.i]) {
                    self.i += 1;
                }
                let text: String = self.s[start..self.i].iter().collect();
                text.parse::<f64>().map(Value::Number).map_err(|_| format!("bad value at {start}"))
            }
        }
    }
    fn string(&mut self) -> Result<String, String> {
        self.expect('"')?;
        let mut out = String::new();
        loop {
            let c = self.peek()?;
            self.i += 1;
            match c {
                '"' => return Ok(out),
                '\\' => {
                    let e = self.peek()?;
                    self.i += 1;
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'u' => {
                            let hex: String = self.s.get(self.i..self.i + 4).ok_or("bad escape")?.iter().collect();
                            self.i += 4;
                            let code = u32::from_str_radix(&hex, 16).map_err(|_| "bad escape")?;
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        other => out.push(other),
                    }
                }
                c => out.push(c),
            }
        }
    }
}
