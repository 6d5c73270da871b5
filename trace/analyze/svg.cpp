#include "trace/analyze/svg.h"

#include <cstdio>

namespace trace {
namespace {
std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}
}  // namespace

Svg::Svg(int width, int height) : width_(width), height_(height) {}

std::string Svg::escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

void Svg::rect(double x, double y, double w, double h, const std::string& fill, const std::string& title) {
  body_ += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) +
           "\" fill=\"" + fill + "\">";
  if (!title.empty()) body_ += "<title>" + escape(title) + "</title>";
  body_ += "</rect>\n";
}

void Svg::line(double x1, double y1, double x2, double y2, const std::string& stroke) {
  body_ += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) +
           "\" stroke=\"" + stroke + "\"/>\n";
}

void Svg::text(double x, double y, const std::string& content, int size, const std::string& anchor) {
  body_ += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + std::to_string(size) +
           "\" font-family=\"sans-serif\" text-anchor=\"" + anchor + "\">" + escape(content) + "</text>\n";
}

std::string Svg::finish() const {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         std::to_string(width_) + "\" height=\"" + std::to_string(height_) + "\" viewBox=\"0 0 " +
         std::to_string(width_) + " " + std::to_string(height_) +
         "\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + body_ + "</svg>\n";
}

}  // namespace trace
