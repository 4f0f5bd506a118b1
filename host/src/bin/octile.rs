fn main() { println!("octile"); }
